-- Compare-and-DEL, then wakes waiters on the release channel.
-- KEYS[1] lock key; ARGV[1] the grant's value (owner:token), ARGV[2] release channel
-- Returns 1 when deleted, 0 when the lock is gone or someone else's.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[2], ARGV[1])
return 1
