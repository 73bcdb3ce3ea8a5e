-- The use of a level's limits (after dropping what left the window), or {} when it has none.
local function level_use(levels, window_ms)
  if not levels then return {} end
  local l = levels[1]
  lim_purge(l.w, l.t, l.c, now_ms, window_ms)
  return lim_use(l.w, l.t, l.c, l.rpm, l.tpm, l.cc, now_ms, window_ms)
end
