-- Takes the lock if it is free, atomically with the fencing increment.
-- KEYS[1] lock key, KEYS[2] fence counter (never expires, so tokens never go back), KEYS[3] waiting marker
-- ARGV[1] owner, ARGV[2] TTL in milliseconds, ARGV[3] waiting marker lifetime in milliseconds
-- Returns {1, token} when granted; {0, PTTL of the holder} when held (-1: the holder set no expiry).
-- A held lock also (re)sets the waiting marker, which stops the holder's client from handing the
-- lock straight on to its own next contender while this one waits.
local ttl = tonumber(ARGV[2])
if ttl == nil or ttl < 1 or ttl ~= math.floor(ttl) then
  return redis.error_reply('ERR warden acquire: TTL must be a positive whole number of milliseconds')
end
local pttl = redis.call('PTTL', KEYS[1])
if pttl ~= -2 then
  redis.call('SET', KEYS[3], '1', 'PX', ARGV[3])
  return {0, pttl}
end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], string.format('%s:%d', ARGV[1], token), 'PX', ARGV[2])
return {1, token}
