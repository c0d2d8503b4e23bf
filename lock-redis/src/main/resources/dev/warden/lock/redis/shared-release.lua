-- Compare-and-delete of a shared name's entry, then wakes the attempts behind it.
-- KEYS[1] queue, KEYS[2] entries (as in shared-poll.lua)
-- ARGV[1] entry id, ARGV[2] the grant's token, or 0 for whatever token the entry has (an abandoned
-- attempt, whose last poll may not have answered), ARGV[3] channel, ARGV[4] PUBLISH or SPUBLISH
-- Returns 1 when a live entry was removed; 0 when it was gone, under another token (left alone), or
-- expired (removed all the same).
-- A removal takes the entry's weight off the sum and counts in the removals (see shared-poll.lua); the
-- last one deletes both, and with them the hash.
local TOTALS = 'totals'
if ARGV[4] ~= 'PUBLISH' and ARGV[4] ~= 'SPUBLISH' then
  return redis.error_reply('ERR warden shared release: publish with PUBLISH or SPUBLISH')
end
if ARGV[1] == TOTALS then
  return 0
end
local value = redis.call('HGET', KEYS[2], ARGV[1])
if not value then
  return 0
end
local token, weight, expires = string.match(value, '^(%d+)|(%d+)|%d+|(%d+)|[01]|%d+$')
if ARGV[2] ~= '0' and token ~= ARGV[2] then
  return 0
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
local t, r = string.match(redis.call('HGET', KEYS[2], TOTALS) or '', '^(%d+)|(%d+)$')
if t then
  -- An unreadable entry's weight is not known: the sum keeps it (overcounting, never under).
  local total = tonumber(t) - (tonumber(weight) or 0)
  if total > 0 then
    redis.call('HSET', KEYS[2], TOTALS, string.format('%d', total) .. '|' .. string.format('%d', tonumber(r) + 1))
  else
    redis.call('HDEL', KEYS[2], TOTALS)
  end
end
redis.call(ARGV[4], ARGV[3], 'released')
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if expires and tonumber(expires) > now then
  return 1
end
return 0
