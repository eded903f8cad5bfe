-- Health of a muster.dev WorkloadSpread: a FleetJob's parallelism laid over ordered
-- subsets of clusters. Each subset's Schedulable condition turns False while its pods wait
-- for a node; an Adaptive spread then sends new pods to later subsets, a Fixed one cannot.
-- Only the base and table libraries are used, so the script also runs as an argocd-cm
-- customization, where Argo CD opens no other library.
local hs = {}

local generation = obj.metadata.generation or 0
local status = obj.status
if status == nil or (status.observedGeneration or 0) < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the hub to observe generation " .. tostring(generation)
  return hs
end
if status.subsets == nil or #status.subsets == 0 then
  hs.status = "Progressing"
  hs.message = "Waiting for the target to be spread"
  if obj.spec ~= nil and obj.spec.targetRef ~= nil then
    hs.message = "Waiting for FleetJob " .. tostring(obj.spec.targetRef.name) .. " to be spread"
  end
  return hs
end

local adaptive = obj.spec ~= nil and obj.spec.scheduleStrategy ~= nil and obj.spec.scheduleStrategy.type == "Adaptive"
for _, subset in ipairs(status.subsets) do
  for _, c in ipairs(subset.conditions or {}) do
    if c.type == "Schedulable" and c.status == "False" then
      hs.status = "Degraded"
      if adaptive then
        hs.status = "Progressing"
      end
      hs.message = c.message
      return hs
    end
  end
end

hs.status = "Healthy"
hs.message = tostring(status.replicas or 0) .. " replicas spread: " .. tostring(status.subsetReplicas or "")
return hs
