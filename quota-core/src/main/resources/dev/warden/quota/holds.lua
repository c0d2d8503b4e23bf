#!lua flags=
-- Authorisation holds, atomically: hold, capture, release (void), and the sweep of expired holds.
-- No allow-oom flag, so a server over maxmemory refuses the script before it starts.
-- KEYS: marker, hold index, journal, then for hold/capture/release: account, hold record
-- ARGV: op ('hold', 'capture', 'release', 'read', 'sweep'), now ms, retention ms, marker value, sweep limit,
--       then for hold/capture/release/read: account, hold id, amount ('' for release and read), expires ms ('' unless hold)
-- 'read' answers a hold's state, amount, captured amount and expiry without writing (no sweep either), so a
-- caller that prices a hold first learns of a lost partition (no_marker) as every other call does.
--
-- Keys of the partition (all under its hash tag):
--   quota:{p<N>}:acct:<account>          hash: balance (available), held (sum of the account's open holds)
--   quota:{p<N>}:hold:<account>:<hold>   hash: state (held|captured|released|expired), amount, expires,
--                                        hb/hh/he (available, held and entry right after the hold),
--                                        captured, returned, eb/ee (available and entry after it ended);
--                                        no TTL while held, the retention once ended (so a retry is a duplicate)
--   quota:{p<N>}:holds                   sorted set of open holds, '<account>:<hold>' scored by expiry ms
-- Time is the caller's: 'now' comes in ARGV (the engine's clock), never from the server.
-- The sweep touches the hold and account keys it finds in the index: not in KEYS, but under the same
-- hash tag, so in the same Cluster slot.
-- Order: validate -> marker -> sweep of due holds (each expiry complete on its own: checks, then writes)
-- -> the operation's checks -> its writes.
local op, now, retention, expected, limit = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]

if op ~= 'hold' and op ~= 'capture' and op ~= 'release' and op ~= 'read' and op ~= 'sweep' then
  return {'invalid_argument', 'op'}
end
if not positive_integer(now) then return {'invalid_argument', 'now'} end
if not positive_integer(retention) then return {'invalid_argument', 'retention'} end
if not positive_integer(limit) then return {'invalid_argument', 'limit'} end
local base = partition_base(KEYS[1])
if not base or KEYS[2] ~= base .. ':holds' or KEYS[3] ~= base .. ':journal' then
  return {'invalid_argument', 'keys'}
end

local account, hold_id, amount_text, expires
if op ~= 'sweep' then
  account, hold_id, amount_text, expires = ARGV[6], ARGV[7], ARGV[8], ARGV[9]
  local bad = id_problem(account)
  if bad then return {'invalid_id', 'ACCOUNT', bad} end
  bad = id_problem(hold_id)
  if bad then return {'invalid_id', 'HOLD', bad} end
  if op ~= 'release' and op ~= 'read' then
    bad = amount_problem(amount_text, false)
    if bad then return {'invalid_amount', bad} end
  end
  if op == 'hold' and not positive_integer(expires) then return {'invalid_argument', 'expires'} end
  if KEYS[4] ~= base .. ':acct:' .. account or KEYS[5] ~= base .. ':hold:' .. account .. ':' .. hold_id then
    return {'invalid_argument', 'keys'}
  end
end

local problem = marker_problem(KEYS[1], expected)
if problem then return problem end

-- Ends an open hold: its amount back to available, journaled. Returns the available balance after,
-- or nil when the account's figures are not digits (left alone for reconciliation to report).
local function finish(acct, id, hkey, akey, state, captured)
  local h = redis.call('HMGET', hkey, 'amount')
  local amount = h[1]
  local fields = redis.call('HMGET', akey, 'balance', 'held')
  local balance, held = fields[1], fields[2] or '0'
  if not amount or not balance or not string.find(balance, '^[0-9]+$') or not string.find(held, '^[0-9]+$')
      or tonumber(held) < tonumber(amount) then
    return nil
  end
  local rest = tonumber(amount) - captured
  -- Every check is done; writes start here.
  redis.call('ZREM', KEYS[2], acct .. ':' .. id)
  local after = balance
  local entry = ''
  if captured > 0 then
    redis.call('HINCRBY', akey, 'held', '-' .. canonical(captured))
    entry = redis.call('XADD', KEYS[3], '*', 'account', acct, 'kind', 'capture', 'amount', canonical(captured),
      'request', id, 'balance', after, 'token', '-')
  end
  if rest > 0 then
    redis.call('HINCRBY', akey, 'held', '-' .. canonical(rest))
    after = canonical(redis.call('HINCRBY', akey, 'balance', canonical(rest)))
    -- A capture's remainder is journaled as a release of the same hold: one entry per balance move.
    entry = redis.call('XADD', KEYS[3], '*', 'account', acct, 'kind', state == 'expired' and 'expire' or 'release',
      'amount', canonical(rest), 'request', id, 'balance', after, 'token', '-')
  end
  redis.call('HSET', hkey, 'state', state, 'captured', canonical(captured), 'returned', canonical(rest),
    'eb', after, 'ee', entry)
  redis.call('PEXPIRE', hkey, retention)
  return after
end

-- Expires up to 'limit' due holds of this partition; returns how many, and whether more are due.
local function sweep(max)
  local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, max)
  local count = 0
  for _, member in ipairs(due) do
    local acct, id = string.match(member, '^([^:]+):(.+)$')
    local hkey = acct and (base .. ':hold:' .. acct .. ':' .. id)
    if hkey and redis.call('HGET', hkey, 'state') == 'held'
        and finish(acct, id, hkey, base .. ':acct:' .. acct, 'expired', 0) then
      count = count + 1
    else
      -- Ended or gone: nothing to return. (Unreadable figures too: left for reconciliation to report.)
      redis.call('ZREM', KEYS[2], member)
      -- A record left held out of the index because its account is gone would never end: it lives the retention.
      -- (One whose account holds unreadable figures stays, as evidence for reconciliation.)
      if hkey and redis.call('EXISTS', base .. ':acct:' .. acct) == 0 and redis.call('PTTL', hkey) == -1 then
        redis.call('PEXPIRE', hkey, retention)
      end
    end
  end
  local more = #redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 1) > 0
  return count, more
end

if op == 'sweep' then
  local count, more = sweep(tonumber(limit))
  return {'swept', canonical(count), more and '1' or '0'}
end

if op == 'read' then
  local f = redis.call('HMGET', KEYS[5], 'state', 'amount', 'captured', 'expires')
  if not f[1] then
    if not redis.call('HGET', KEYS[4], 'balance') then return {'not_found'} end
    return {'unknown_hold'}
  end
  return {'hold', f[1], f[2] or '', f[3] or '', f[4] or ''}
end

-- Any touch of the partition returns what is due, so an expired hold does not wait for a sweep.
sweep(tonumber(limit))

local rec = redis.call('HGETALL', KEYS[5])
local h = {}
for i = 1, #rec, 2 do h[rec[i]] = rec[i + 1] end

if op == 'hold' then
  if h.state then
    if h.amount == amount_text then return {'duplicate', 'held', h.hb, h.hh, h.expires, h.he} end
    return {'conflict', h.amount}
  end
  local fields = redis.call('HMGET', KEYS[4], 'balance', 'held')
  local balance, held = fields[1], fields[2] or '0'
  if not balance then return {'not_found'} end
  if not string.find(balance, '^[0-9]+$') then return {'corrupt', balance} end
  if not string.find(held, '^[0-9]+$') then return {'corrupt', held} end
  if tonumber(balance) < tonumber(amount_text) then return {'insufficient', balance} end
  -- Every check is done; writes start here.
  local after = canonical(redis.call('HINCRBY', KEYS[4], 'balance', '-' .. amount_text))
  local held_after = canonical(redis.call('HINCRBY', KEYS[4], 'held', amount_text))
  -- The expiry travels with the entry: the ledger keeps open holds, and bootstrap restores them with it.
  local entry = redis.call('XADD', KEYS[3], '*', 'account', account, 'kind', 'hold', 'amount', amount_text,
    'request', hold_id, 'balance', after, 'token', '-', 'expires', expires)
  redis.call('HSET', KEYS[5], 'state', 'held', 'amount', amount_text, 'expires', expires, 'hb', after,
    'hh', held_after, 'he', entry)
  redis.call('ZADD', KEYS[2], expires, account .. ':' .. hold_id)
  return {'held', after, held_after, expires, entry}
end

-- capture or release
if not h.state then
  if not redis.call('HGET', KEYS[4], 'balance') then return {'not_found'} end
  return {'unknown_hold'}
end
if h.state == 'held' and not decimal_less(now, h.expires) then
  -- Due but not yet swept (the sweep's limit): it expires now, and the caller is told so.
  if not finish(account, hold_id, KEYS[5], KEYS[4], 'expired', 0) then return {'corrupt', h.amount} end
  return {'expired', h.amount}
end
if h.state == 'expired' then return {'expired', h.returned} end
if op == 'capture' then
  if h.state == 'captured' then
    if h.captured == amount_text then return {'duplicate', 'captured', h.captured, h.returned, h.eb, h.ee} end
    return {'already_captured', h.captured}
  end
  if h.state == 'released' then return {'already_released', h.returned} end
  if tonumber(amount_text) > tonumber(h.amount) then return {'exceeds_hold', h.amount} end
  local after = finish(account, hold_id, KEYS[5], KEYS[4], 'captured', tonumber(amount_text))
  if not after then return {'corrupt', h.amount} end
  local done = redis.call('HMGET', KEYS[5], 'returned', 'ee')
  return {'captured', amount_text, done[1], after, done[2]}
end
-- release
if h.state == 'released' then return {'duplicate', 'released', h.returned, h.eb, h.ee} end
if h.state == 'captured' then return {'already_captured', h.captured} end
local after = finish(account, hold_id, KEYS[5], KEYS[4], 'released', 0)
if not after then return {'corrupt', h.amount} end
return {'released', h.amount, after, redis.call('HGET', KEYS[5], 'ee')}
