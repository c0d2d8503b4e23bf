-- Compare-and-renew of a shared name's granted entry: pushes its expiry on by the TTL while it is live,
-- granted and still under this grant's token.
-- KEYS[1] queue, KEYS[2] entries (as in shared-poll.lua)
-- ARGV[1] entry id, ARGV[2] the grant's token, ARGV[3] TTL in milliseconds, ARGV[4] channel,
-- ARGV[5] PUBLISH or SPUBLISH
-- Returns 1 when extended; 0 when the entry is gone, not this grant's, or expired (then it is removed,
-- as shared-release.lua removes one, and the attempts behind it are woken).
local TOTALS = 'totals'
local ttl = tonumber(ARGV[3])
if ttl == nil or ttl < 1 or ttl ~= math.floor(ttl) then
  return redis.error_reply('ERR warden shared renew: TTL must be a positive whole number of milliseconds')
end
if ARGV[5] ~= 'PUBLISH' and ARGV[5] ~= 'SPUBLISH' then
  return redis.error_reply('ERR warden shared renew: publish with PUBLISH or SPUBLISH')
end
if ARGV[1] == TOTALS then
  return 0
end
local value = redis.call('HGET', KEYS[2], ARGV[1])
if not value then
  return 0
end
local token, weight, limit, expires, granted, seen = string.match(value, '^(%d+)|(%d+)|(%d+)|(%d+)|([01])|(%d+)$')
if token ~= ARGV[2] or granted ~= '1' then
  return 0
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if tonumber(expires) <= now then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
  local t, r = string.match(redis.call('HGET', KEYS[2], TOTALS) or '', '^(%d+)|(%d+)$')
  if t then
    local total = tonumber(t) - tonumber(weight)
    if total > 0 then
      redis.call('HSET', KEYS[2], TOTALS, string.format('%d', total) .. '|' .. string.format('%d', tonumber(r) + 1))
    else
      redis.call('HDEL', KEYS[2], TOTALS)
    end
  end
  redis.call(ARGV[5], ARGV[4], 'expired')
  return 0
end
redis.call('HSET', KEYS[2], ARGV[1], token .. '|' .. weight .. '|' .. limit .. '|' .. string.format('%d', now + ttl) .. '|1|' .. seen)
for i = 1, 2 do
  if redis.call('PTTL', KEYS[i]) < ttl then
    redis.call('PEXPIRE', KEYS[i], ttl)
  end
end
return 1
