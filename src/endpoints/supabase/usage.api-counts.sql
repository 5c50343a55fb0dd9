-- usage.api-counts: API requests of one project per time bucket, split into four API areas.
--
-- Parameters (all strings):
--   @project   a regular expression matched (contains) against the request URL
--   @interval  the window ending now and its bucket size:
--
--     value                          window       bucket
--     minutely, 1hr, 60min           60 minutes   1 minute
--     1min / 5min / 15min / 30min    that many    1 minute
--     hourly                         1 hour       1 hour
--     3hr                            3 hours      1 hour
--     1day, 1d, 24hr                 24 hours     1 hour
--     daily, 7day, 7d                7 days       1 day
--     anything else                  (none)       no rows
--
-- A request is counted under every area whose text its path contains. Counts are 0, not NULL.
-- Callers may read the CTEs `dates` (one row: `start`, the window start) and `chart_counts`
-- (per-bucket counts before the final summation).
with dates as (
  select
    case
      when @interval in ('minutely', '1hr', '60min') then timestamp_sub(current_timestamp(), interval 60 minute)
      when @interval = '1min' then timestamp_sub(current_timestamp(), interval 1 minute)
      when @interval = '5min' then timestamp_sub(current_timestamp(), interval 5 minute)
      when @interval = '15min' then timestamp_sub(current_timestamp(), interval 15 minute)
      when @interval = '30min' then timestamp_sub(current_timestamp(), interval 30 minute)
      when @interval = 'hourly' then timestamp_sub(current_timestamp(), interval 1 hour)
      when @interval = '3hr' then timestamp_sub(current_timestamp(), interval 3 hour)
      when @interval in ('1day', '1d', '24hr') then timestamp_sub(current_timestamp(), interval 24 hour)
      when @interval in ('daily', '7day', '7d') then timestamp_sub(current_timestamp(), interval 7 day)
    end as start
),
chart_counts as (
  select
    case
      when @interval in ('hourly', '3hr', '1day', '1d', '24hr') then timestamp_trunc(t.timestamp, hour)
      when @interval in ('daily', '7day', '7d') then timestamp_trunc(t.timestamp, day)
      else timestamp_trunc(t.timestamp, minute)
    end as timestamp,
    countif(regexp_contains(request.path, '/rest')) as total_rest_requests,
    countif(regexp_contains(request.path, '/storage')) as total_storage_requests,
    countif(regexp_contains(request.path, '/auth')) as total_auth_requests,
    countif(regexp_contains(request.path, '/realtime')) as total_realtime_requests,
  from `cloudflare.logs.prod` as t
  cross join unnest(t.metadata) as m
  cross join unnest(m.request) as request
  where t.timestamp >= (select start from dates)
    and regexp_contains(request.url, @project)
  group by timestamp
)
select
  datetime(timestamp, 'UTC') as timestamp,
  coalesce(sum(total_rest_requests), 0) as total_rest_requests,
  coalesce(sum(total_storage_requests), 0) as total_storage_requests,
  coalesce(sum(total_auth_requests), 0) as total_auth_requests,
  coalesce(sum(total_realtime_requests), 0) as total_realtime_requests,
from chart_counts
group by timestamp
order by timestamp asc;
