-- Health of a muster.dev BroadcastJob: one pod per eligible node, in its own cluster or,
-- on the hub, in every selected member cluster. status.phase summarises the Complete,
-- Failed, Paused and NodesEligible conditions; the hub adds ShardsApplied.
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
  hs.message = "Waiting for the controller to observe generation " .. tostring(generation)
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
local applied = condition(conditions, "ShardsApplied")
if applied ~= nil and applied.status == "False" then
  hs.status = "Degraded"
  hs.message = applied.message
  return hs
end

-- Paused by spec.paused waits for a person to resume it; paused by failurePolicy Pause
-- means a pod failed.
local paused = condition(conditions, "Paused")
if paused ~= nil and paused.status == "True" then
  hs.status = "Suspended"
  if paused.reason == "PausedOnFailure" then
    hs.status = "Degraded"
  end
  hs.message = paused.message
  return hs
end

-- No eligible node or cluster is a wait; a hub job without placement never runs.
local eligible = condition(conditions, "NodesEligible")
if eligible ~= nil and eligible.status == "False" then
  hs.status = "Progressing"
  if eligible.reason == "NoPlacement" then
    hs.status = "Degraded"
  end
  hs.message = eligible.message
  return hs
end

local desired, active = status.desired or 0, status.active or 0
local counts = tostring(status.succeeded or 0) .. " of " .. tostring(desired) .. " pods succeeded, " ..
  tostring(active) .. " active"
-- completionPolicy Never keeps the job open for new nodes: once every eligible node ran
-- its pod, it is healthy, as a DaemonSet would be.
if obj.spec ~= nil and obj.spec.completionPolicy ~= nil and obj.spec.completionPolicy.type == "Never" and
  active == 0 and desired > 0 then
  hs.status = "Healthy"
  hs.message = counts .. "; waiting for new eligible nodes"
  return hs
end
hs.status = "Progressing"
hs.message = counts
return hs
