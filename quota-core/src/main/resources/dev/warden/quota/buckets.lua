#!lua flags=
-- The buckets of a split account (see Buckets.java). One call touches one bucket, in its own
-- partition's slot. Bucket 0 is the account's own key (quota:{pH}:acct:<account>, field 'buckets' = N
-- while split, 'drain' = the old N while a merge empties the others); bucket i > 0 is
-- quota:{pI}:bkt:<account>:<i> (fields 'balance' and 'of' = the N of its split, 0 once closed by a merge).
-- Every change of a bucket's balance is journaled on its own partition's stream with the ACCOUNT id,
-- so the ledger, summing an account's entries from several streams in any interleaving, only ever
-- sums bucket balances that each were non-negative: it never sees a negative account.
--
-- A move between buckets takes five calls: 'take' at the source (balance down, the move recorded as
-- pending in the source's moves hash, journaled 'moveout'), 'give' at the target (once per move id: a
-- record in the target's slot, without a lifetime; journaled 'movein'), 'mark' at the source (the pending
-- record says 'given'), 'expire' at the target (the record now lives the retention), 'finish' at the source
-- (the pending record deleted). A process dying between them leaves the pending record: whoever settles the
-- account (a balance read, a split, a merge, a gathering deduction) completes the move from where it
-- stopped. Until the pending record says 'given', the give record has no lifetime, so however late the
-- settling comes its give finds the record and the move is given once; once it says 'given', nobody gives
-- again, and the record need only outlive a settler that read the pending record before (the retention).
--
-- ARGV: op, account, bucket index, marker value, then the op's own arguments.
-- KEYS: marker, bucket key, then the op's own keys.
local op, account, index, expected = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

local bad = id_problem(account)
if bad then return {'invalid_id', 'ACCOUNT', bad} end
if not string.find(index or '', '^[0-9]+$') or #index > 3 then return {'invalid_argument', 'index'} end
local base = partition_base(KEYS[1])
local home = index == '0'
if not base or KEYS[2] ~= (home and (base .. ':acct:' .. account) or (base .. ':bkt:' .. account .. ':' .. index)) then
  return {'invalid_argument', 'keys'}
end
local function key_ok(k, suffix)
  return k == base .. suffix
end

-- The split this bucket belongs to: bucket 0's 'buckets' (1 when absent), bucket i's 'of' (0 when closed
-- or never created).
local function split_of(f)
  if home then return f or '1' end
  return f or '0'
end

-- Whether a caller that routed by split n may use this bucket: bucket 0 (which says what the split is)
-- when n is its split; bucket i > 0 while it is open (whichever split opened it: its quota is the
-- account's, and a closed one sends the caller back to bucket 0).
local function serves(f, n)
  if home then return split_of(f) == n end
  return split_of(f) ~= '0'
end

if op == 'create' then
  -- KEYS: marker, bucket, moves. ARGV: ..., N, bucket 0's fence mark ('-' when none). A bucket i > 0 at 0,
  -- belonging to split N, with bucket 0's fence mark (a holder bucket 0 has superseded is refused here too);
  -- the partition's marker written when absent (no account may ever have been opened there).
  local n, fence = ARGV[5], ARGV[6] or '-'
  if fence ~= '-' and not token_ok(fence) then return {'invalid_argument', 'fence'} end
  if home or not key_ok(KEYS[3], ':moves:' .. account) then return {'invalid_argument', 'keys'} end
  local marker = redis.call('GET', KEYS[1])
  if marker and marker ~= expected then return {'marker_mismatch', marker} end
  local f = redis.call('HMGET', KEYS[2], 'balance', 'of')
  if f[1] and (f[1] ~= '0' or redis.call('HLEN', KEYS[3]) > 0) then return {'busy', f[1], f[2] or '0'} end
  if not marker then redis.call('SET', KEYS[1], expected) end
  redis.call('HSET', KEYS[2], 'balance', '0', 'of', n)
  if fence ~= '-' then redis.call('HSET', KEYS[2], 'fence', fence) end
  return {'created'}
end

local problem = marker_problem(KEYS[1], expected)
if problem then return problem end

if op == 'read' then
  -- KEYS: marker, bucket, moves. Reply: 'bucket', balance ('' when absent), split, drain, then pending
  -- moves as id, target, amount, given ('1' once marked given, else '0') quadruples.
  if not key_ok(KEYS[3], ':moves:' .. account) then return {'invalid_argument', 'keys'} end
  local f = redis.call('HMGET', KEYS[2], 'balance', home and 'buckets' or 'of', 'drain')
  local reply = {'bucket', f[1] or '', f[1] and split_of(f[2]) or '0', f[3] or '0'}
  local pending = redis.call('HGETALL', KEYS[3])
  for i = 1, #pending, 2 do
    local target, amount, given = string.match(pending[i + 1], '^([0-9]+)|([0-9]+)(|?g?)$')
    reply[#reply + 1] = pending[i]
    reply[#reply + 1] = target
    reply[#reply + 1] = amount
    reply[#reply + 1] = given == '|g' and '1' or '0'
  end
  return reply
end

if op == 'route' then
  -- Bucket 0 only. KEYS: marker, account. ARGV: ..., expected split, new split, drain ('0' to clear).
  -- Compare-and-set of the account's split.
  if not home then return {'invalid_argument', 'index'} end
  local f = redis.call('HMGET', KEYS[2], 'balance', 'buckets', 'drain')
  if not f[1] then return {'not_found'} end
  local now = split_of(f[2])
  if now ~= ARGV[5] or (ARGV[6] ~= '1' and f[3]) then return {'moved', now, f[3] or '0'} end
  if ARGV[6] == '1' then redis.call('HDEL', KEYS[2], 'buckets') else redis.call('HSET', KEYS[2], 'buckets', ARGV[6]) end
  if ARGV[7] == '0' then redis.call('HDEL', KEYS[2], 'drain') else redis.call('HSET', KEYS[2], 'drain', ARGV[7]) end
  return {'routed', ARGV[6]}
end

if op == 'change' then
  -- KEYS: marker, bucket, request record, journal.
  -- ARGV: ..., split N the caller routed by, kind (deduct/topup/refund), amount, request id, token, retention.
  local n, kind, amount_text, request, token, retention = ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10]
  bad = id_problem(request)
  if bad then return {'invalid_id', 'REQUEST', bad} end
  bad = amount_problem(amount_text, false)
  if bad then return {'invalid_amount', bad} end
  if kind ~= 'deduct' and kind ~= 'topup' and kind ~= 'refund' then return {'invalid_argument', 'kind'} end
  if token == nil or not token_ok(token) then return {'invalid_argument', 'token'} end
  if not positive_integer(retention) then return {'invalid_argument', 'retention'} end
  if not key_ok(KEYS[3], ':req:' .. account .. ':' .. request) or not key_ok(KEYS[4], ':journal') then
    return {'invalid_argument', 'keys'}
  end
  -- Idempotency first: a retry that reaches the bucket of its first try is answered whatever happened since.
  local replay = replay_reply(KEYS[3], kind, account, amount_text)
  if replay then return replay end
  local f = redis.call('HMGET', KEYS[2], 'balance', home and 'buckets' or 'of', 'fence')
  if home and not f[1] then return {'not_found'} end
  if not f[1] or not serves(f[2], n) then return {'moved', f[1] and split_of(f[2]) or '0'} end
  local balance = f[1]
  if not string.find(balance, '^[0-9]+$') then return {'corrupt', balance} end
  local fence = f[3]
  if token ~= '-' and fence and decimal_less(token, fence) then
    return {'stale_fence', fence}
  end
  local delta = amount_text
  if kind == 'deduct' then
    if token ~= '-' and (not fence or decimal_less(fence, token)) then
      redis.call('HSET', KEYS[2], 'fence', token)
    end
    if tonumber(balance) < tonumber(amount_text) then return {'insufficient', balance} end
    delta = '-' .. amount_text
  elseif tonumber(amount_text) > tonumber(MAX_AMOUNT) - tonumber(balance) then
    return {'invalid_amount', 'BALANCE_OVERFLOW'}
  end
  local after = canonical(redis.call('HINCRBY', KEYS[2], 'balance', delta))
  local entry = redis.call('XADD', KEYS[4], '*', 'account', account, 'kind', kind, 'amount', amount_text,
    'request', request, 'balance', after, 'token', token)
  redis.call('SET', KEYS[3], kind .. '|' .. amount_text .. '|' .. after .. '|' .. entry .. '|' .. account,
    'PX', retention)
  return {'applied', after, entry}
end

if op == 'fence' then
  -- KEYS: marker, bucket. ARGV: ..., token. Raises this bucket's fence mark to the token, or refuses a token
  -- below it. A fenced change of a split account raises every bucket (bucket 0 first, which has seen every
  -- token) before it changes its own, so a superseded holder is refused wherever its request routes.
  local token = ARGV[5]
  if token == nil or token == '-' or not token_ok(token) then return {'invalid_argument', 'token'} end
  local f = redis.call('HMGET', KEYS[2], 'balance', 'fence', 'buckets', 'drain')
  if not f[1] then
    if home then return {'not_found'} end
    return {'fenced', '0'} -- closed and gone: it takes no change
  end
  if f[2] and decimal_less(token, f[2]) then return {'stale_fence', f[2]} end
  if not f[2] or decimal_less(f[2], token) then redis.call('HSET', KEYS[2], 'fence', token) end
  -- Bucket 0 says how many buckets there are now (a merge in progress: the old count), so a caller whose idea
  -- of the split is stale still fences every bucket a change may reach.
  if home then return {'fenced', string.format('%d', math.max(tonumber(f[3] or '1'), tonumber(f[4] or '1')))} end
  return {'fenced', '0'}
end

if op == 'take' or op == 'close' then
  -- KEYS: marker, bucket, journal, moves.
  -- take  ARGV: ..., split N, move id, target index, wanted, exact ('1': at most wanted; '0': at least
  --       wanted when there is that much, or 1/N of the balance when that is more).
  -- close ARGV: ..., '-', move id, '0': bucket i > 0 only; marks it closed and takes all of it to bucket 0.
  local n, move, target, wanted, exact = ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9]
  if id_problem(move) or not string.find(target or '', '^[0-9]+$') then return {'invalid_argument', 'move'} end
  if not key_ok(KEYS[3], ':journal') or not key_ok(KEYS[4], ':moves:' .. account) then
    return {'invalid_argument', 'keys'}
  end
  local f = redis.call('HMGET', KEYS[2], 'balance', home and 'buckets' or 'of')
  if not f[1] then return {'moved', '0'} end
  local balance = tonumber(f[1])
  local x
  if op == 'close' then
    if home then return {'invalid_argument', 'index'} end
    redis.call('HSET', KEYS[2], 'of', '0')
    x = balance
  else
    if not serves(f[2], n) then return {'moved', split_of(f[2])} end
    local want = tonumber(wanted)
    if exact == '1' then x = math.min(balance, want) else x = math.min(balance, math.max(want, math.floor(balance / tonumber(n)))) end
  end
  if x <= 0 then return {'taken', '0'} end
  local amount_text = canonical(x)
  local after = canonical(redis.call('HINCRBY', KEYS[2], 'balance', '-' .. amount_text))
  redis.call('HSET', KEYS[4], move, target .. '|' .. amount_text)
  redis.call('XADD', KEYS[3], '*', 'account', account, 'kind', 'moveout', 'amount', amount_text,
    'request', move, 'balance', after, 'token', '-')
  return {'taken', amount_text}
end

if op == 'give' then
  -- KEYS: marker, bucket, journal, move record. ARGV: ..., move id, amount.
  -- Once per move id: the record answers every later give; it has no lifetime until 'expire' (after the
  -- source marked the move given). A closed bucket takes nothing: the record says 'redirected' and the
  -- caller gives to bucket 0 instead (which is never closed).
  local move, amount_text = ARGV[5], ARGV[6]
  if id_problem(move) then return {'invalid_argument', 'move'} end
  bad = amount_problem(amount_text, false)
  if bad then return {'invalid_amount', bad} end
  if not key_ok(KEYS[3], ':journal') or not key_ok(KEYS[4], ':moved:' .. account .. ':' .. move) then
    return {'invalid_argument', 'keys'}
  end
  local rec = redis.call('GET', KEYS[4])
  if rec then return {rec} end
  local f = redis.call('HMGET', KEYS[2], 'balance', home and 'buckets' or 'of')
  if not f[1] and home then return {'not_found'} end
  if not home and (not f[1] or split_of(f[2]) == '0') then
    redis.call('SET', KEYS[4], 'redirected')
    return {'redirected'}
  end
  -- 2^53-1 at most, like every balance (the move's quota left another bucket of the same account).
  if tonumber(amount_text) > tonumber(MAX_AMOUNT) - tonumber(f[1]) then return {'invalid_amount', 'BALANCE_OVERFLOW'} end
  local after = canonical(redis.call('HINCRBY', KEYS[2], 'balance', amount_text))
  redis.call('XADD', KEYS[3], '*', 'account', account, 'kind', 'movein', 'amount', amount_text,
    'request', move, 'balance', after, 'token', '-')
  redis.call('SET', KEYS[4], 'given')
  return {'given'}
end

if op == 'mark' then
  -- KEYS: marker, bucket, moves. ARGV: ..., move id. At the source, after the give: nobody gives it again.
  if not key_ok(KEYS[3], ':moves:' .. account) then return {'invalid_argument', 'keys'} end
  local v = redis.call('HGET', KEYS[3], ARGV[5])
  if v and not string.find(v, '|g$') then redis.call('HSET', KEYS[3], ARGV[5], v .. '|g') end
  return {'marked'}
end

if op == 'expire' then
  -- KEYS: marker, bucket, move record. ARGV: ..., move id, retention. At the target, once the source says
  -- 'given': the record lives the retention, for a settler that read the pending record before that.
  if id_problem(ARGV[5]) or not key_ok(KEYS[3], ':moved:' .. account .. ':' .. ARGV[5]) then
    return {'invalid_argument', 'keys'}
  end
  if not positive_integer(ARGV[6]) then return {'invalid_argument', 'retention'} end
  redis.call('PEXPIRE', KEYS[3], ARGV[6])
  return {'expiring'}
end

if op == 'drop' then
  -- KEYS: marker, bucket, moves. Bucket i > 0 only: deletes it once a merge has closed and emptied it and
  -- nothing is pending from it, so a merged account leaves no key behind. A call routed to it later finds it
  -- gone, which answers as closed does ('moved'; a give is redirected to bucket 0).
  if home or not key_ok(KEYS[3], ':moves:' .. account) then return {'invalid_argument', 'keys'} end
  local f = redis.call('HMGET', KEYS[2], 'balance', 'of')
  if not f[1] then return {'dropped'} end
  if f[2] ~= '0' or f[1] ~= '0' or redis.call('HLEN', KEYS[3]) > 0 then return {'busy', f[1], f[2] or ''} end
  redis.call('DEL', KEYS[2])
  return {'dropped'}
end

if op == 'finish' then
  -- KEYS: marker, bucket, moves. ARGV: ..., move id.
  if not key_ok(KEYS[3], ':moves:' .. account) then return {'invalid_argument', 'keys'} end
  redis.call('HDEL', KEYS[3], ARGV[5])
  return {'finished'}
end

return {'invalid_argument', 'op'}
