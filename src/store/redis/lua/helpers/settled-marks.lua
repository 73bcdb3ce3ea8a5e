-- The settled markers, one hash per account and hour ({A}:sh:<hour>): a request's mark is a 64-bit fingerprint of its
-- id (the first 8 bytes of its SHA-1), filed under a field of its first byte (0xFF and that byte: no UTF-8 text holds
-- 0xFF, so no field of the layout before is one) whose value is the other 7 bytes of every mark filed there, end to end.
-- A busy hour is 256 fields of packed marks (~8 B a request); a quiet one stays a small listpack.
-- settled_before(id, ttl, skew): whether a bucket that can still hold a mark set within ttl, and not before the
-- request was made (a UUIDv7 id's time, less skew s for the clocks; any other id: the whole window), holds the
-- request's mark, or its field of the layout before (the id's 16 bytes and 0xFF, or the id). settle_mark(id, ttl):
-- marks it in this hour's bucket, which expires ttl after its hour ends.
local settle_slot = string.sub(KEYS[1], 1, -2)
-- 16 hex digits as the 8 bytes they spell: 32 bits per tonumber and one string.char (a gsub calling a function per
-- byte, or a table of bytes unpacked, cost a settlement without its reservation a tenth of its time).
local floor = math.floor
local function hex_bytes(hex)
  local a, b = tonumber(string.sub(hex, 1, 8), 16), tonumber(string.sub(hex, 9, 16), 16)
  return string.char(floor(a / 16777216), floor(a / 65536) % 256, floor(a / 256) % 256, a % 256,
    floor(b / 16777216), floor(b / 65536) % 256, floor(b / 256) % 256, b % 256)
end
-- A request's mark (its field and the 7 bytes filed there), worked out once per script however often it is asked.
local mark_id, mark_field, mark_rest
local function fingerprint(id)
  if mark_id ~= id then
    local bytes = hex_bytes(string.sub(redis.sha1hex(id), 1, 16))
    mark_id, mark_field, mark_rest = id, '\255' .. string.sub(bytes, 1, 1), string.sub(bytes, 2)
  end
  return mark_field, mark_rest
end
local function layout_before(id)
  if #id == 36 and string.sub(id, 9, 9) == '-' and string.sub(id, 14, 14) == '-' and string.sub(id, 19, 19) == '-'
    and string.sub(id, 24, 24) == '-' and not string.find(id, '[^%-0-9a-f]') then
    local hex = string.gsub(id, '%-', '')
    if #hex == 32 then return hex_bytes(string.sub(hex, 1, 16)) .. hex_bytes(string.sub(hex, -16)) .. '\255' end
  end
  return id
end
-- Whether the packed marks hold rest at a mark's start.
local function holds(packed, rest)
  local at = 1
  while true do
    local i = string.find(packed, rest, at, true)
    if not i then return false end
    if (i - 1) % #rest == 0 then return true end
    at = i + 1
  end
end
-- The time (s) a UUIDv7 id says it was made, or 0.
local function made_s(id)
  local high, low = string.match(id, '^(%x%x%x%x%x%x%x%x)%-(%x%x%x%x)%-7%x%x%x%-%x%x%x%x%-%x+$')
  if not high or #id ~= 36 then return 0 end
  return tonumber(high .. low, 16) / 1000
end
-- What settled_before read of this hour's field (false: nothing) and for which request, for that request's
-- settle_mark to append to without reading it again; used once (the mark changes the field), and never for another
-- request (a group of settlements runs several in one script).
local this_hour_id, this_hour_field
local function settled_before(id, ttl, skew)
  local field, rest = fingerprint(id)
  local before = layout_before(id)
  local hour = math.floor(now_s / 3600)
  local first = math.max(math.floor((now_s - ttl) / 3600), math.floor((made_s(id) - skew) / 3600))
  for h = hour, first, -1 do
    local got = redis.call('HMGET', settle_slot .. 'sh:' .. h, field, before)
    if h == hour then this_hour_id, this_hour_field = id, got[1] end
    if got[2] or (got[1] and holds(got[1], rest)) then return true end
  end
  return false
end
local function settle_mark(id, ttl)
  local field, rest = fingerprint(id)
  local hour = math.floor(now_s / 3600)
  local bucket = settle_slot .. 'sh:' .. hour
  local was
  if this_hour_id == id then was = this_hour_field else was = redis.call('HGET', bucket, field) end
  this_hour_id = nil
  redis.call('HSET', bucket, field, (was or '') .. rest)
  -- A new bucket's first mark is a new field: the expiry is set once per field, not per request.
  if not was then redis.call('EXPIREAT', bucket, (hour + 1) * 3600 + ttl) end
end
