-- Health of a muster.dev Work: manifests the hub sends to one member cluster, applied by
-- that member's agent, which reports Applied and Available for the generation it applied
-- and the same conditions per manifest.
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
local status = obj.status or {}
local applied = condition(status.conditions, "Applied")
if applied == nil or (status.observedGeneration or 0) < generation or (applied.observedGeneration or 0) < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the agent to apply generation " .. tostring(generation)
  return hs
end

if applied.status == "False" then
  hs.status = "Degraded"
  hs.message = applied.message
  -- The first failed manifest says why, in the member API server's words.
  for _, m in ipairs(status.manifests or {}) do
    local c = condition(m.conditions, "Applied")
    if c ~= nil and c.status ~= "True" then
      local r = m.resource or {}
      hs.message = hs.message .. "; " .. tostring(r.kind) .. " " .. tostring(r.name) .. ": " .. tostring(c.message)
      break
    end
  end
  return hs
end
if applied.status ~= "True" then
  hs.status = "Progressing"
  hs.message = applied.message
  return hs
end
-- The agent reports an object missing only with its failed apply, handled above.
local available = condition(status.conditions, "Available")
if available == nil or available.status ~= "True" then
  hs.status = "Progressing"
  hs.message = "Waiting for the applied objects to exist in the member"
  return hs
end
hs.status = "Healthy"
hs.message = available.message
return hs
