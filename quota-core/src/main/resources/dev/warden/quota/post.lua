#!lua flags=
-- Named balances, atomically: open one, or post to several of one account at once.
-- No allow-oom flag, so a server over maxmemory refuses the script before it starts.
-- KEYS: marker, account, balances, request record, posting record, journal
-- ARGV: op ('open' or 'post'), account, request id ('' for open), retention ms, marker value, line count,
--       then per line: balance name, sign ('+' credit, '-' debit), amount; names in strictly ascending order
--       (one canonical text per posting, so a retry compares equal)
--
-- Keys of the partition (all under its hash tag):
--   quota:{p<N>}:acct:<account>                 hash: balance (the main balance), held, fence
--   quota:{p<N>}:bal:<account>                  hash: one field per named balance, its amount
--   quota:{p<N>}:req:<account>:<requestId>      idempotency record 'post|0|0|<entry>|<account>', so a
--                                               deduction or top-up reusing the id sees a conflict
--   quota:{p<N>}:post:<account>:<requestId>     '<entry>|<lines>|<balances after>', same retention: what a
--                                               retry compares and answers
-- Order: validate -> marker -> idempotency -> account -> every line's balance (exists, covers the debit,
-- no overflow) -> writes: each balance, one journal entry for the whole posting, the two records.
local op, account, request, retention, expected, n = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local MAX_LINES = 16

-- Byte order (Lua's '<' on strings follows the server's collation locale, which may skip '-' and '_').
local function before(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

if op ~= 'open' and op ~= 'post' then return {'invalid_argument', 'op'} end
local bad = id_problem(account)
if bad then return {'invalid_id', 'ACCOUNT', bad} end
if op == 'post' then
  bad = id_problem(request)
  if bad then return {'invalid_id', 'REQUEST', bad} end
  if not positive_integer(retention) then return {'invalid_argument', 'retention'} end
end
if not n or not string.find(n, '^[0-9]+$') then return {'invalid_argument', 'lines'} end
n = tonumber(n)
if n == 0 then return {'invalid_posting', 'EMPTY'} end
if n > MAX_LINES then return {'invalid_posting', 'TOO_MANY_BALANCES'} end
if (op == 'open' and n ~= 1) or #ARGV ~= 6 + 3 * n then return {'invalid_argument', 'lines'} end

local names, signs, amounts = {}, {}, {}
for i = 1, n do
  local name, sign, amount = ARGV[4 + 3 * i], ARGV[5 + 3 * i], ARGV[6 + 3 * i]
  if name == '' then return {'invalid_id', 'BALANCE', 'EMPTY'} end
  if #name > 32 then return {'invalid_id', 'BALANCE', 'TOO_LONG'} end
  if not string.find(name, '^[a-z0-9_-]+$') then return {'invalid_id', 'BALANCE', 'CHARACTER_NOT_ALLOWED'} end
  if i > 1 and not before(names[i - 1], name) then return {'invalid_argument', 'order'} end
  if op == 'post' then
    if sign ~= '+' and sign ~= '-' then return {'invalid_argument', 'sign'} end
    bad = amount_problem(amount, false)
    if bad then return {'invalid_amount', name, bad} end
  end
  names[i], signs[i], amounts[i] = name, sign, amount
end

local base = partition_base(KEYS[1])
if not base or KEYS[2] ~= base .. ':acct:' .. account or KEYS[3] ~= base .. ':bal:' .. account
    or KEYS[6] ~= base .. ':journal' then
  return {'invalid_argument', 'keys'}
end
if op == 'post' and (KEYS[4] ~= base .. ':req:' .. account .. ':' .. request
    or KEYS[5] ~= base .. ':post:' .. account .. ':' .. request) then
  return {'invalid_argument', 'keys'}
end

local problem = marker_problem(KEYS[1], expected)
if problem then return problem end

if op == 'open' then
  if not redis.call('HGET', KEYS[2], 'balance') then return {'not_found'} end
  local current = redis.call('HGET', KEYS[3], names[1])
  if current then return {'exists', names[1], current} end
  -- Every check is done; the write. Not journaled: a new balance holds 0, and the ledger counts a
  -- balance it has no row for as 0 (its row comes with the first posting).
  redis.call('HSET', KEYS[3], names[1], '0')
  return {'opened', names[1]}
end

local lines = {}
for i = 1, n do lines[i] = names[i] .. '=' .. signs[i] .. amounts[i] end
lines = table.concat(lines, ',')

local rec = redis.call('GET', KEYS[4])
if rec then
  local kind, _, _, _, acct = parse_record(rec)
  if kind == 'post' and acct == account then
    local posted = redis.call('GET', KEYS[5])
    local entry, plines, after = string.match(posted or '', '^([^|]*)|([^|]*)|(.*)$')
    if plines == lines then
      local reply = {'duplicate', entry}
      for name, amt in string.gmatch(after, '([^,=]+)=([0-9]+)') do
        reply[#reply + 1] = name
        reply[#reply + 1] = amt
      end
      return reply
    end
  end
  return {'conflict', kind or '?'}
end

local main = redis.call('HGET', KEYS[2], 'balance')
if not main then return {'not_found'} end
local after = {}
for i = 1, n do
  local current = redis.call('HGET', KEYS[3], names[i])
  if not current then return {'unknown_balance', names[i]} end
  if not string.find(current, '^[0-9]+$') then return {'corrupt', names[i], current} end
  if signs[i] == '-' then
    if tonumber(current) < tonumber(amounts[i]) then return {'insufficient', names[i], current} end
  elseif tonumber(amounts[i]) > tonumber(MAX_AMOUNT) - tonumber(current) then
    -- Both are at most 2^53-1, so the difference is exact in a double.
    return {'invalid_amount', names[i], 'BALANCE_OVERFLOW'}
  end
end

-- Every check is done; writes start here.
local reply = {'posted', ''}
for i = 1, n do
  local delta = signs[i] == '-' and ('-' .. amounts[i]) or amounts[i]
  after[i] = names[i] .. '=' .. canonical(redis.call('HINCRBY', KEYS[3], names[i], delta))
  reply[#reply + 1] = names[i]
  reply[#reply + 1] = string.match(after[i], '=([0-9]+)$')
end
-- One entry for the whole posting: the ledger applies its lines in one transaction, as Redis did here.
local entry = redis.call('XADD', KEYS[6], '*', 'account', account, 'kind', 'post', 'amount', '0',
  'request', request, 'balance', main, 'token', '-', 'lines', lines)
reply[2] = entry
redis.call('SET', KEYS[4], 'post|0|0|' .. entry .. '|' .. account, 'PX', retention)
redis.call('SET', KEYS[5], entry .. '|' .. lines .. '|' .. table.concat(after, ','), 'PX', retention)
return reply
