-- Compare-and-PEXPIRE: extends the lock only while it still holds this grant's value.
-- KEYS[1] lock key; ARGV[1] the grant's value (owner:token), ARGV[2] TTL in milliseconds
-- Returns 1 when extended, 0 when the lock is gone or someone else's.
local ttl = tonumber(ARGV[2])
if ttl == nil or ttl < 1 or ttl ~= math.floor(ttl) then
  return redis.error_reply('ERR warden renew: TTL must be a positive whole number of milliseconds')
end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
