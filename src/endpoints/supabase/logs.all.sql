-- logs.all: the log rows of one project, newest first, one CTE per Supabase log source.
--
-- Parameters (all strings):
--   @project              rows of this project only (top-level `project`, or metadata.project /
--                         metadata.project_ref for sources that carry it there)
--   @iso_timestamp_start  exclusive lower bound; NULL or '' means no lower bound
--   @iso_timestamp_end    inclusive upper bound; NULL or '' means no upper bound
--
-- Callers (sandboxed `sql` / `lql`) replace the final SELECT and may read any of these CTEs,
-- each with the columns timestamp, id, event_message, metadata.
with
edge_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `cloudflare.logs.prod` as t
  where t.project = @project
    and (@iso_timestamp_start is null or @iso_timestamp_start = ''
         or t.timestamp > safe_cast(@iso_timestamp_start as timestamp))
    and (@iso_timestamp_end is null or @iso_timestamp_end = ''
         or t.timestamp <= safe_cast(@iso_timestamp_end as timestamp))
  order by t.timestamp desc
),
postgres_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `postgres.logs` as t
  where t.project = @project
    and (@iso_timestamp_start is null or @iso_timestamp_start = ''
         or t.timestamp > safe_cast(@iso_timestamp_start as timestamp))
    and (@iso_timestamp_end is null or @iso_timestamp_end = ''
         or t.timestamp <= safe_cast(@iso_timestamp_end as timestamp))
  order by t.timestamp desc
),
function_edge_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `deno-relay-logs` as t
  cross join unnest(t.metadata) as m
  where m.project_ref = @project
    and (@iso_timestamp_start is null or @iso_timestamp_start = ''
         or t.timestamp > safe_cast(@iso_timestamp_start as timestamp))
    and (@iso_timestamp_end is null or @iso_timestamp_end = ''
         or t.timestamp <= safe_cast(@iso_timestamp_end as timestamp))
  order by t.timestamp desc
),
function_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `deno-subhosting-events` as t
  cross join unnest(t.metadata) as m
  where m.project_ref = @project
    and (@iso_timestamp_start is null or @iso_timestamp_start = ''
         or t.timestamp > safe_cast(@iso_timestamp_start as timestamp))
    and (@iso_timestamp_end is null or @iso_timestamp_end = ''
         or t.timestamp <= safe_cast(@iso_timestamp_end as timestamp))
  order by t.timestamp desc
),
auth_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `gotrue.logs.prod` as t
  where t.project = @project
    and (@iso_timestamp_start is null or @iso_timestamp_start = ''
         or t.timestamp > safe_cast(@iso_timestamp_start as timestamp))
    and (@iso_timestamp_end is null or @iso_timestamp_end = ''
         or t.timestamp <= safe_cast(@iso_timestamp_end as timestamp))
  order by t.timestamp desc
),
realtime_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `realtime.logs.prod` as t
  cross join unnest(t.metadata) as m
  where m.project = @project
    and (@iso_timestamp_start is null or @iso_timestamp_start = ''
         or t.timestamp > safe_cast(@iso_timestamp_start as timestamp))
    and (@iso_timestamp_end is null or @iso_timestamp_end = ''
         or t.timestamp <= safe_cast(@iso_timestamp_end as timestamp))
  order by t.timestamp desc
),
storage_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `storage.logs.prod.2` as t
  cross join unnest(t.metadata) as m
  where m.project = @project
    and (@iso_timestamp_start is null or @iso_timestamp_start = ''
         or t.timestamp > safe_cast(@iso_timestamp_start as timestamp))
    and (@iso_timestamp_end is null or @iso_timestamp_end = ''
         or t.timestamp <= safe_cast(@iso_timestamp_end as timestamp))
  order by t.timestamp desc
),
postgrest_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `postgREST.logs.prod` as t
  where t.project = @project
    and (@iso_timestamp_start is null or @iso_timestamp_start = ''
         or t.timestamp > safe_cast(@iso_timestamp_start as timestamp))
    and (@iso_timestamp_end is null or @iso_timestamp_end = ''
         or t.timestamp <= safe_cast(@iso_timestamp_end as timestamp))
  order by t.timestamp desc
),
pgbouncer_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `pgbouncer.logs.prod` as t
  where t.project = @project
    and (@iso_timestamp_start is null or @iso_timestamp_start = ''
         or t.timestamp > safe_cast(@iso_timestamp_start as timestamp))
    and (@iso_timestamp_end is null or @iso_timestamp_end = ''
         or t.timestamp <= safe_cast(@iso_timestamp_end as timestamp))
  order by t.timestamp desc
)
select id, timestamp, event_message, metadata
from edge_logs
limit 100
