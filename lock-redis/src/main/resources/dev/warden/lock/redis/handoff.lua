-- Compare-and-release, and unless another client waits, grant to the next owner in the same step.
-- KEYS[1] lock key, KEYS[2] fence counter, KEYS[3] waiting marker
-- ARGV[1] the grant's value (owner:token), ARGV[2] next owner, ARGV[3] TTL in milliseconds,
-- ARGV[4] release channel
-- Returns {1, token} when handed on; {2, 0} when only released (someone else waits: woken as by a
-- release); {0, 0} when the lock is gone or someone else's (nothing changed).
local ttl = tonumber(ARGV[3])
if ttl == nil or ttl < 1 or ttl ~= math.floor(ttl) then
  return redis.error_reply('ERR warden handoff: TTL must be a positive whole number of milliseconds')
end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return {0, 0}
end
if redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[4], ARGV[1])
  return {2, 0}
end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], string.format('%s:%d', ARGV[2], token), 'PX', ARGV[3])
return {1, token}
