-- Health of a muster.dev FleetCronJob: FleetJobs or BroadcastJobs created on a schedule
-- by the hub. As for a batch/v1 CronJob, the last run's outcome is read from
-- lastScheduleTime and lastSuccessfulTime, which are RFC 3339 times in UTC and so compare
-- as strings.
-- Only the base and table libraries are used, so the script also runs as an argocd-cm
-- customization, where Argo CD opens no other library.
local hs = {}

local function condition(conditions, condType)
  if conditions == nil then
    return nil
  end
  for _, c in ipairs(conditions) do
    if c.type == condType then
      return c
    end
  end
  return nil
end

if obj.spec ~= nil and obj.spec.suspend == true then
  hs.status = "Suspended"
  hs.message = "spec.suspend is true: no runs are created"
  return hs
end

local generation = obj.metadata.generation or 0
local status = obj.status or {}
local valid = condition(status.conditions, "ScheduleValid")
if valid == nil or (valid.observedGeneration or 0) < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the hub to observe generation " .. tostring(generation)
  return hs
end
if valid.status == "False" then
  hs.status = "Degraded"
  hs.message = valid.message
  return hs
end

local active = status.activeCount or 0
if status.lastScheduleTime == nil then
  hs.status = "Healthy"
  hs.message = "No run yet"
  if status.nextScheduleTime ~= nil then
    hs.message = "No run yet; the first is due at " .. status.nextScheduleTime
  end
  return hs
end
if active > 0 then
  hs.status = "Healthy"
  hs.message = "Active runs: " .. tostring(active) .. "; the last was scheduled at " .. status.lastScheduleTime
  return hs
end
if status.lastSuccessfulTime == nil or status.lastSuccessfulTime < status.lastScheduleTime then
  hs.status = "Degraded"
  hs.message = "The run scheduled at " .. status.lastScheduleTime .. " did not succeed"
  return hs
end
hs.status = "Healthy"
hs.message = "The last run succeeded at " .. status.lastSuccessfulTime
return hs
