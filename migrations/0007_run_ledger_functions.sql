-- Admission and settlement as one statement each: a call is one round trip and one transaction, which keeps the
-- organizations' account locks held for the least time (an organization's lock serializes every admission and
-- settlement of that organization, across processes). Each function takes a batch of runs of any number of
-- organizations (the process gathers the runs that arrive while a batch is in flight into the next one) and locks
-- their accounts in organization id order, so two batches never wait on each other in a cycle.

-- One run asking to be admitted; `i` is its place in the batch.
CREATE TYPE arbiter_admission AS (
  i integer,
  org text,
  id uuid,
  origin text,
  key text,
  kind text,
  digest text,
  hold_tokens bigint,
  deadline_ms bigint
);

-- Adds an organization's new holds to its account and its period.
CREATE FUNCTION arbiter_hold(p_org text, p_period date, p_credit bigint, p_spend bigint, p_tokens bigint)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF p_credit > 0 THEN
    UPDATE credit_accounts SET reserved_micros = reserved_micros + p_credit WHERE organization_id = p_org;
  END IF;
  IF p_spend > 0 OR p_tokens > 0 THEN
    INSERT INTO quota_periods (organization_id, period, spend_reserved_micros, tokens_reserved)
      VALUES (p_org, p_period, p_spend, p_tokens)
      ON CONFLICT (organization_id, period) DO UPDATE
        SET spend_reserved_micros = quota_periods.spend_reserved_micros + excluded.spend_reserved_micros,
            tokens_reserved = quota_periods.tokens_reserved + excluded.tokens_reserved;
  END IF;
END
$$;

-- Admits a batch of runs. Per organization (in id order, under its account lock), for each of its requests in
-- arrival order: the same idempotency key with the same input digest replays the stored run (no quota or credit
-- check); otherwise the period quota must hold the whole ceiling and the token reservation; a key owning a run with
-- another digest is a conflict (after the quota check); with billing on, available credit must hold the ceiling;
-- then the run is stored `pending` with its holds. The common case, a new key that passes, costs one insert and no
-- lookup. Returns one outcome per request, in batch order, with the numbers a refusal names.
CREATE FUNCTION arbiter_admit(p_now timestamptz, p_ceiling bigint, p_requests json)
RETURNS json LANGUAGE plpgsql AS $$
DECLARE
  v_period date := date_trunc('month', p_now AT TIME ZONE 'UTC')::date;
  v_requests arbiter_admission[];
  r arbiter_admission;
  v_org text := NULL;
  v_billing boolean;
  v_balance bigint;
  v_reserved bigint;
  v_spend_limit bigint;
  v_token_limit bigint;
  v_spend_settled bigint;
  v_spend_reserved bigint;
  v_tokens_settled bigint;
  v_tokens_reserved bigint;
  v_credit_hold bigint := 0;
  v_spend_hold bigint := 0;
  v_token_hold bigint := 0;
  v_refusal json;
  v_existing runs%ROWTYPE;
  v_out json[];
BEGIN
  SELECT array_agg(x ORDER BY x.org, x.i) INTO v_requests
    FROM json_populate_recordset(NULL::arbiter_admission, p_requests) AS x;
  IF v_requests IS NULL THEN
    RETURN '[]'::json;
  END IF;
  v_out := array_fill(NULL::json, ARRAY[array_length(v_requests, 1)], ARRAY[0]);

  FOREACH r IN ARRAY v_requests LOOP
    IF v_org IS DISTINCT FROM r.org THEN
      IF v_org IS NOT NULL THEN
        PERFORM arbiter_hold(v_org, v_period, v_credit_hold, v_spend_hold, v_token_hold);
      END IF;
      v_org := r.org;
      v_credit_hold := 0;
      v_spend_hold := 0;
      v_token_hold := 0;
      SELECT o.billing_enabled, a.balance_micros, a.reserved_micros INTO v_billing, v_balance, v_reserved
        FROM credit_accounts a JOIN organizations o ON o.id = a.organization_id
        WHERE a.organization_id = v_org FOR UPDATE OF a;
      IF NOT FOUND THEN
        INSERT INTO credit_accounts (organization_id) VALUES (v_org) ON CONFLICT DO NOTHING;
        SELECT o.billing_enabled, a.balance_micros, a.reserved_micros INTO v_billing, v_balance, v_reserved
          FROM credit_accounts a JOIN organizations o ON o.id = a.organization_id
          WHERE a.organization_id = v_org FOR UPDATE OF a;
      END IF;
      v_spend_limit := NULL;
      v_token_limit := NULL;
      SELECT period_spend_limit_micros, period_token_limit INTO v_spend_limit, v_token_limit
        FROM quota_limits WHERE organization_id = v_org;
      v_spend_settled := NULL;
      v_spend_reserved := NULL;
      v_tokens_settled := NULL;
      v_tokens_reserved := NULL;
      SELECT spend_settled_micros, spend_reserved_micros, tokens_settled, tokens_reserved
        INTO v_spend_settled, v_spend_reserved, v_tokens_settled, v_tokens_reserved
        FROM quota_periods WHERE organization_id = v_org AND period = v_period;
      v_spend_settled := COALESCE(v_spend_settled, 0);
      v_spend_reserved := COALESCE(v_spend_reserved, 0);
      v_tokens_settled := COALESCE(v_tokens_settled, 0);
      v_tokens_reserved := COALESCE(v_tokens_reserved, 0);
    END IF;

    -- The checks of a new run; the insert then finds out, through the unique index, whether the key is new.
    v_refusal := NULL;
    IF v_spend_limit IS NOT NULL AND v_spend_settled + v_spend_reserved + p_ceiling > v_spend_limit THEN
      v_refusal := json_build_object('outcome', 'spend_quota', 'limit', v_spend_limit,
        'used', v_spend_settled, 'held', v_spend_reserved, 'asked', p_ceiling);
    ELSIF v_token_limit IS NOT NULL AND v_tokens_settled + v_tokens_reserved + r.hold_tokens > v_token_limit THEN
      v_refusal := json_build_object('outcome', 'token_quota', 'limit', v_token_limit,
        'used', v_tokens_settled, 'held', v_tokens_reserved, 'asked', r.hold_tokens);
    ELSIF v_billing AND v_balance - v_reserved - v_credit_hold < p_ceiling THEN
      v_refusal := json_build_object('outcome', 'credits', 'available', v_balance - v_reserved - v_credit_hold,
        'asked', p_ceiling);
    END IF;
    IF v_refusal IS NULL THEN
      INSERT INTO runs (id, organization_id, origin, idempotency_key, kind, state, input_digest, period, hold_micros,
          hold_tokens, hold_credit, held, deadline_at, created_at)
        VALUES (r.id, v_org, r.origin, r.key, r.kind, 'pending', r.digest, v_period, p_ceiling, r.hold_tokens,
          v_billing, true, p_now + r.deadline_ms * interval '1 millisecond', p_now)
        ON CONFLICT (organization_id, origin, idempotency_key) DO NOTHING;
      IF FOUND THEN
        IF v_billing THEN v_credit_hold := v_credit_hold + p_ceiling; END IF;
        v_spend_hold := v_spend_hold + p_ceiling;
        v_token_hold := v_token_hold + r.hold_tokens;
        v_spend_reserved := v_spend_reserved + p_ceiling;
        v_tokens_reserved := v_tokens_reserved + r.hold_tokens;
        v_out[r.i] := json_build_object('outcome', 'admitted', 'hold_credit', v_billing);
        CONTINUE;
      END IF;
    END IF;
    -- The key may own a run: the same input replays it (no check applies); another input is a conflict, which a
    -- quota refusal precedes and a credit refusal follows.
    SELECT * INTO v_existing FROM runs
      WHERE organization_id = v_org AND origin = r.origin AND idempotency_key = r.key;
    IF FOUND AND v_existing.input_digest = r.digest THEN
      v_out[r.i] := json_build_object('outcome', 'replayed', 'run', row_to_json(v_existing));
    ELSIF FOUND AND (v_refusal IS NULL OR v_refusal ->> 'outcome' = 'credits') THEN
      v_out[r.i] := json_build_object('outcome', 'conflict');
    ELSE
      v_out[r.i] := COALESCE(v_refusal, json_build_object('outcome', 'conflict'));
    END IF;
  END LOOP;
  PERFORM arbiter_hold(v_org, v_period, v_credit_hold, v_spend_hold, v_token_hold);
  RETURN array_to_json(v_out);
END
$$;

-- Settles a batch of runs of any organizations, their accounts locked in id order. Only runs still `pending` (and
-- of the organization named with them) are settled, so a settlement retried after a lost commit charges nothing
-- twice: each gets its ledger rows (kept once per call index: calls stored while it ran stay as they are), its
-- final state, its tokens and cost as the sum of its ledger rows, that cost captured from the balance into its
-- organization's UTC day usage transaction (when it held credit), what remains of its holds released (when it
-- still holds), and its period counters moved. Returns, per organization of the batch, the account afterwards and whether an
-- auto-recharge is due (the recharge itself claims its turn atomically).
CREATE FUNCTION arbiter_settle(p_now timestamptz, p_runs json, p_calls json)
RETURNS json LANGUAGE plpgsql AS $$
DECLARE
  v_orgs text[];
  v_claimed uuid[];
  v_ids uuid[];
  v_usage_id text := 'txn_usage_' || to_char(p_now AT TIME ZONE 'UTC', 'YYYYMMDD');
BEGIN
  SELECT array_agg(DISTINCT x ->> 'org'), array_agg((x ->> 'id')::uuid) INTO v_orgs, v_claimed
    FROM json_array_elements(p_runs) AS x;
  IF v_orgs IS NULL THEN
    RETURN '{}'::json;
  END IF;
  PERFORM 1 FROM credit_accounts WHERE organization_id = ANY(v_orgs) ORDER BY organization_id FOR UPDATE;

  -- Locked by primary key; the state is tested after the lock (a filter, not a condition the planner could answer
  -- from the partial index of pending runs, whose dead entries grow between vacuums).
  SELECT array_agg(id) FILTER (WHERE state = 'pending') INTO v_ids FROM (
    SELECT r.id, r.state FROM runs r JOIN json_to_recordset(p_runs) AS v(id uuid, org text) ON v.id = r.id
    WHERE r.id = ANY(v_claimed) AND r.organization_id = v.org
    FOR UPDATE OF r) AS claimed;

  IF v_ids IS NOT NULL THEN
    -- The calls, kept once each (those stored while the run was in flight are already there).
    INSERT INTO ledger_entries (organization_id, run_id, call_index, retry_ordinal, provider, model_id,
        provider_request_id, status, input_tokens, output_tokens, cost_micros, created_at)
      SELECT r.organization_id, c.run_id, c.call_index, c.retry_ordinal, c.provider, c.model_id,
        c.provider_request_id, c.status, c.input_tokens, c.output_tokens, c.cost_micros, c.created_at
      FROM json_to_recordset(p_calls) AS c(run_id uuid, call_index integer, retry_ordinal integer, provider text,
        model_id text, provider_request_id text, status text, input_tokens bigint, output_tokens bigint,
        cost_micros bigint, created_at timestamptz)
      JOIN runs r ON r.id = c.run_id
      WHERE c.run_id = ANY(v_ids) AND r.id = ANY(v_ids)
      ORDER BY c.run_id, c.call_index
      ON CONFLICT (run_id, call_index) DO NOTHING;

    -- A run's tokens and cost are those of its ledger entries.
    WITH totals AS (
      SELECT l.run_id, sum(l.input_tokens) AS input_tokens, sum(l.output_tokens) AS output_tokens,
        sum(l.cost_micros) AS cost_micros
      FROM ledger_entries l WHERE l.run_id = ANY(v_ids) GROUP BY l.run_id
    ), settled AS (
      SELECT r.organization_id, r.period, COALESCE(t.cost_micros, 0) AS cost_micros,
        COALESCE(t.input_tokens + t.output_tokens, 0) AS tokens, r.held, r.hold_micros, r.hold_tokens, r.hold_credit
      FROM runs r LEFT JOIN totals t ON t.run_id = r.id
      WHERE r.id = ANY(v_ids)
    ), periods AS (
      SELECT organization_id, period, sum(cost_micros) AS spend, sum(tokens) AS tokens,
        sum(CASE WHEN held THEN hold_micros ELSE 0 END) AS released_spend,
        sum(CASE WHEN held THEN hold_tokens ELSE 0 END) AS released_tokens
      FROM settled GROUP BY organization_id, period
    ), accounts AS (
      SELECT organization_id, sum(CASE WHEN hold_credit THEN cost_micros ELSE 0 END) AS captured,
        sum(CASE WHEN held AND hold_credit THEN hold_micros ELSE 0 END) AS released_credit
      FROM settled GROUP BY organization_id
    ), moved_periods AS (
      INSERT INTO quota_periods AS q (organization_id, period, spend_settled_micros, tokens_settled)
        SELECT organization_id, period, spend, tokens FROM periods
        ORDER BY organization_id, period
        ON CONFLICT (organization_id, period) DO UPDATE
          SET spend_settled_micros = q.spend_settled_micros + excluded.spend_settled_micros,
              tokens_settled = q.tokens_settled + excluded.tokens_settled,
              spend_reserved_micros = q.spend_reserved_micros - (SELECT p.released_spend FROM periods p
                WHERE p.organization_id = excluded.organization_id AND p.period = excluded.period),
              tokens_reserved = q.tokens_reserved - (SELECT p.released_tokens FROM periods p
                WHERE p.organization_id = excluded.organization_id AND p.period = excluded.period)
    ), moved_accounts AS (
      UPDATE credit_accounts AS a SET balance_micros = a.balance_micros - s.captured,
          reserved_micros = a.reserved_micros - s.released_credit
        FROM accounts s
        WHERE a.organization_id = s.organization_id AND (s.captured > 0 OR s.released_credit > 0)
    )
    INSERT INTO credit_transactions AS t (organization_id, id, kind, amount_micros, description, created_at,
        updated_at)
      SELECT organization_id, v_usage_id, 'usage', -captured,
        'Decision model usage on ' || to_char(p_now AT TIME ZONE 'UTC', 'YYYY-MM-DD') || ' (UTC)', p_now, p_now
      FROM accounts WHERE captured > 0
      ORDER BY organization_id
      ON CONFLICT (organization_id, id) DO UPDATE
        SET amount_micros = t.amount_micros + excluded.amount_micros, updated_at = excluded.updated_at;

    UPDATE runs AS r SET state = v.state, output = v.output, output_digest = v.output_digest,
        error_code = v.error_code, error_message = v.error_message,
        input_tokens = COALESCE(t.input_tokens, 0), output_tokens = COALESCE(t.output_tokens, 0),
        cost_micros = COALESCE(t.cost_micros, 0), held = false,
        settled_at = CASE WHEN v.state = 'pending' THEN NULL ELSE p_now END
      FROM json_to_recordset(p_runs) AS v(id uuid, state text, output json, output_digest text, error_code text,
          error_message text)
        LEFT JOIN (SELECT l.run_id, sum(l.input_tokens) AS input_tokens, sum(l.output_tokens) AS output_tokens,
            sum(l.cost_micros) AS cost_micros
          FROM ledger_entries l WHERE l.run_id = ANY(v_ids) GROUP BY l.run_id) AS t ON t.run_id = v.id
      WHERE r.id = v.id AND r.id = ANY(v_ids);
  END IF;

  RETURN (SELECT json_object_agg(a.organization_id, json_build_object(
      'billing_enabled', o.billing_enabled,
      'balance_micros', a.balance_micros,
      'recharge_due', COALESCE(o.billing_enabled AND s.auto_recharge_enabled AND s.recharge_armed
        AND s.payment_method_id IS NOT NULL AND s.processor_customer_id IS NOT NULL
        AND a.balance_micros < s.auto_recharge_threshold_micros
        AND (s.recharge_retry_after IS NULL OR s.recharge_retry_after < p_now), false)))
    FROM credit_accounts a JOIN organizations o ON o.id = a.organization_id
      LEFT JOIN billing_settings s ON s.organization_id = a.organization_id
    WHERE a.organization_id = ANY(v_orgs));
END
$$;
