-- The level functions. lim_check refuses without changing anything; lim_commit counts an admitted request; so a
-- script can check every level before it changes any (a refusal at the last leaves no trace at the first).
-- Guarantees: never more than rpm admissions, nor more than tpm tokens, in any window of window_ms (a sliding log,
-- so no edge admits twice the limit), and never more than max_concurrent requests holding a live lease.
local function lim_purge(w, t, c, now_ms, window_ms)
  local cutoff = now_ms - window_ms
  local old = redis.call('ZRANGEBYSCORE', w, '-inf', cutoff)
  if #old > 0 then
    local freed = 0
    for i = 1, #old do
      local n = redis.call('HGET', t, old[i])
      if n then
        freed = freed + tonumber(n)
        redis.call('HDEL', t, old[i])
      end
    end
    redis.call('ZREMRANGEBYSCORE', w, '-inf', cutoff)
    if freed > 0 then redis.call('HINCRBY', t, '#', -freed) end
  end
  redis.call('ZREMRANGEBYSCORE', c, '-inf', now_ms)
end
-- nil when the request fits; else {kind, limit, used, retry_ms, too_large}.
local function lim_check(w, t, c, rpm, tpm, cc, id, tokens, now_ms, window_ms)
  -- A request that reserves again (a better prompt count) was counted already: it is not a second request.
  local held = redis.call('ZSCORE', w, id)
  if rpm > 0 and not held then
    local n = redis.call('ZCARD', w)
    if n >= rpm then
      local oldest = redis.call('ZRANGE', w, n - rpm, n - rpm, 'WITHSCORES')
      return {'requests', rpm, n, tonumber(oldest[2]) + window_ms - now_ms, 0}
    end
  end
  if tpm > 0 then
    local sum = tonumber(redis.call('HGET', t, '#') or '0')
    if tokens > tpm then return {'tokens', tpm, sum, window_ms, 1} end
    local used = sum - tonumber(redis.call('HGET', t, id) or '0')
    if used + tokens > tpm then
      -- When enough of the others' tokens will have left the window, oldest first.
      local need, freed, at = used + tokens - tpm, 0, now_ms
      local entries = redis.call('ZRANGE', w, 0, -1, 'WITHSCORES')
      for i = 1, #entries, 2 do
        if entries[i] ~= id then
          freed = freed + tonumber(redis.call('HGET', t, entries[i]) or '0')
          if freed >= need then
            at = tonumber(entries[i + 1])
            break
          end
        end
      end
      return {'tokens', tpm, used, at + window_ms - now_ms, 0}
    end
  end
  if cc > 0 and not redis.call('ZSCORE', c, id) then
    local n = redis.call('ZCARD', c)
    -- The retry time of a concurrency refusal is TypeScript's (CONCURRENCY_RETRY_MS, limit-replies.ts fills it in).
    if n >= cc then return {'concurrent', cc, n, 0, 0} end
  end
  return nil
end
local function lim_commit(w, t, c, rpm, tpm, cc, id, tokens, now_ms, window_ms, lease_ms)
  if rpm > 0 or tpm > 0 then
    redis.call('ZADD', w, 'NX', now_ms, id)
    redis.call('PEXPIRE', w, window_ms)
    if tpm > 0 then
      local prior = tonumber(redis.call('HGET', t, id) or '0')
      redis.call('HSET', t, id, tokens)
      redis.call('HINCRBY', t, '#', tokens - prior)
      redis.call('PEXPIRE', t, window_ms)
    end
  end
  if cc > 0 then
    redis.call('ZADD', c, now_ms + lease_ms, id)
    if redis.call('PTTL', c) < lease_ms then redis.call('PEXPIRE', c, lease_ms) end
  end
end
-- {rpm, requests in window, tpm, tokens in window, ms until the window is empty, max_concurrent, in flight}
local function lim_use(w, t, c, rpm, tpm, cc, now_ms, window_ms)
  local n = redis.call('ZCARD', w)
  local reset = 0
  if n > 0 then reset = tonumber(redis.call('ZRANGE', w, -1, -1, 'WITHSCORES')[2]) + window_ms - now_ms end
  local sum = 0
  if tpm > 0 then sum = tonumber(redis.call('HGET', t, '#') or '0') end
  local inflight = 0
  if cc > 0 then inflight = redis.call('ZCARD', c) end
  return {rpm, n, tpm, sum, reset, cc, inflight}
end
-- how: 'settle' (tpm corrected to tokens), 'release' (to 0), 'undo' (as if never admitted). The slot is freed.
local function lim_end(w, t, c, id, how, tokens)
  redis.call('ZREM', c, id)
  local prior = redis.call('HGET', t, id)
  if how == 'undo' then
    redis.call('ZREM', w, id)
    if prior then
      redis.call('HDEL', t, id)
      redis.call('HINCRBY', t, '#', -tonumber(prior))
    end
  elseif prior then
    if how == 'release' then tokens = 0 end
    redis.call('HSET', t, id, tokens)
    redis.call('HINCRBY', t, '#', tokens - tonumber(prior))
  end
end
