-- Health of a muster.dev FleetJob: a batch Job whose shards run in member clusters.
-- The hub sums the shards into status.phase and the Scheduled, Complete, Failed,
-- ShardsApplied and PodsSchedulable conditions; their messages say which cluster and why.
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

local generation = obj.metadata.generation or 0
local status = obj.status
if status == nil or (status.observedGeneration or 0) < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the hub to observe generation " .. tostring(generation)
  return hs
end

local conditions = status.conditions
local failed = condition(conditions, "Failed")
if failed ~= nil and failed.status == "True" then
  hs.status = "Degraded"
  hs.message = failed.message
  return hs
end
local complete = condition(conditions, "Complete")
if complete ~= nil and complete.status == "True" then
  hs.status = "Healthy"
  hs.message = complete.message
  return hs
end

-- A shard name held by another object, or a Job a member refused, needs a person; no
-- eligible cluster is a wait, as for a Job whose pods wait for a node.
local scheduled = condition(conditions, "Scheduled")
if scheduled ~= nil and scheduled.status == "False" then
  hs.status = "Progressing"
  if scheduled.reason == "ShardNameTaken" then
    hs.status = "Degraded"
  end
  hs.message = scheduled.message
  return hs
end
local applied = condition(conditions, "ShardsApplied")
if applied ~= nil and applied.status == "False" then
  hs.status = "Degraded"
  hs.message = applied.message
  return hs
end

if status.phase == "Suspended" then
  hs.status = "Suspended"
  hs.message = "Every shard is suspended"
  return hs
end
local schedulable = condition(conditions, "PodsSchedulable")
if schedulable ~= nil and schedulable.status == "False" then
  hs.status = "Progressing"
  hs.message = schedulable.message
  return hs
end
if status.phase == "Running" then
  hs.status = "Progressing"
  hs.message = "Running: " .. tostring(status.progress or "0") .. " completions, " .. tostring(status.active or 0) ..
    " active pods"
  return hs
end

hs.status = "Progressing"
hs.message = "Waiting for the shards to start"
if applied ~= nil and applied.status == "Unknown" then
  hs.message = applied.message
elseif scheduled ~= nil then
  hs.message = scheduled.message
end
return hs
