#!lua flags=
-- The ledger consumers' registry: a sorted set of consumer names scored by their last heartbeat on
-- the server's clock (no client clock is compared). Records this consumer, forgets those silent for
-- the expiry, and answers the live names in order, so each consumer can compute its fair share.
-- KEYS: registry
-- ARGV: consumer name, expiry ms
local key, name, expiry = KEYS[1], ARGV[1], tonumber(ARGV[2])
if name == nil or name == '' or expiry == nil or expiry < 1 then return {'invalid_argument', 'args'} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', key, string.format('%d', now), name)
redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. string.format('%d', now - expiry))
redis.call('PEXPIRE', key, string.format('%d', expiry * 4))
local live = redis.call('ZRANGE', key, 0, -1)
table.insert(live, 1, 'live')
return live
