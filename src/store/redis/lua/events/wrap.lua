-- A step of the store that writes the events its outcome calls for, in the same atomic step: the step (slot `base`,
-- a script of its own, unchanged) runs as a function after `before` and its reply, in `reply`, is read by `after`.
-- Takes the account's outbox stream {A}:ev as one KEY more (the last) and the event arguments as the input's `ev`
-- (events/prologue.lua). Replies {1 if the account's outbox was empty before this step's events else 0, the step's
-- reply}: the store marks the account only then (a non-empty outbox is marked already, and the hand-on unmarks it only
-- once it has seen it empty; redis-outbox.ts).
--#include events/prologue.lua
--#slot before
local function ev_base()
--#slot base
end
local reply = ev_base()
--#slot after
local ev_mark = 0
if ev_written > 0 and redis.call('XLEN', ev_stream) == ev_written then ev_mark = 1 end
return { ev_mark, reply }
