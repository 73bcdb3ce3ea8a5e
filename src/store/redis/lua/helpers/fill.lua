-- fill(template, values): an event payload TypeScript made (src/store/records/events.ts, templates from
-- event-templates.ts), its "$name" slots filled with values[name], which only the step knows: a number as an integer,
-- a string as JSON. No payload is written in Lua.
local function fill(template, values)
  return (string.gsub(template, '"%$([%w_]+)"', function(name)
    local v = values[name]
    if type(v) == 'number' then return string.format('%d', v) end
    return cjson.encode(v)
  end))
end
