-- settled_mark(id): the request's field in the hour buckets. settled_before(mark, ttl): whether a bucket that can
-- still hold a marker set within ttl holds it. settle_mark(mark, ttl): marks it in this hour's bucket.
local settle_slot = string.sub(KEYS[1], 1, -2)
local function settled_mark(id)
  if #id == 36 and string.sub(id, 9, 9) == '-' and string.sub(id, 14, 14) == '-' and string.sub(id, 19, 19) == '-'
    and string.sub(id, 24, 24) == '-' and not string.find(id, '[^%-0-9a-f]') then
    local hex = string.gsub(id, '%-', '')
    if #hex == 32 then return (string.gsub(hex, '%x%x', function(h) return string.char(tonumber(h, 16)) end)) .. '\255' end
  end
  return id
end
local function settled_before(mark, ttl)
  local hour = math.floor(now_s / 3600)
  for h = hour, math.floor((now_s - ttl) / 3600), -1 do
    if redis.call('HEXISTS', settle_slot .. 'sh:' .. h, mark) == 1 then return true end
  end
  return false
end
local function settle_mark(mark, ttl)
  local hour = math.floor(now_s / 3600)
  local bucket = settle_slot .. 'sh:' .. hour
  redis.call('HSET', bucket, mark, '')
  redis.call('EXPIREAT', bucket, (hour + 1) * 3600 + ttl)
end
