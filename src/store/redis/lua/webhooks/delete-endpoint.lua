-- DELETE_ENDPOINT: removes an endpoint with its queue, history and deliveries. KEYS: eps. ARGV: base, endpoint id.
-- Reply: 1 removed, 0 unknown.
local base, e = ARGV[1], ARGV[2]
if redis.call('HDEL', KEYS[1], e) == 0 then return 0 end
for _, d in ipairs(redis.call('ZRANGE', base .. 'h:' .. e, 0, -1)) do redis.call('DEL', base .. 'd:' .. d, base .. 'a:' .. d) end
redis.call('DEL', base .. 'q:' .. e, base .. 'h:' .. e, base .. 'x:' .. e, base .. 's:' .. e, base .. 'l:' .. e, base .. 'le:' .. e)
return 1
