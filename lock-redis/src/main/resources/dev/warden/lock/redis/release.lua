-- Compare-and-DEL, then wakes waiters on the release channel.
-- KEYS[1] lock key; ARGV[1] the grant's value (owner:token), ARGV[2] release channel,
-- ARGV[3] PUBLISH or SPUBLISH (sharded, on a Cluster: the channel shares the lock's slot)
-- Returns 1 when deleted, 0 when the lock is gone or someone else's.
if ARGV[3] ~= 'PUBLISH' and ARGV[3] ~= 'SPUBLISH' then
  return redis.error_reply('ERR warden release: publish with PUBLISH or SPUBLISH')
end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
redis.call(ARGV[3], ARGV[2], ARGV[1])
return 1
