-- Health of a muster.dev MemberCluster: a cluster joined to the hub. Accepted is the
-- administrator's admission, Joined the agent's hub certificate, Available the agent's
-- lease renewals (Unknown once it stopped renewing for longer than the grace period).
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

local conditions = (obj.status or {}).conditions
local joined = condition(conditions, "Joined")
if joined ~= nil and joined.status == "False" then
  hs.status = "Degraded"
  hs.message = joined.message
  return hs
end
local accepted = condition(conditions, "Accepted")
if accepted ~= nil and accepted.status == "False" then
  hs.status = "Suspended"
  hs.message = accepted.message
  return hs
end
local available = condition(conditions, "Available")
if available == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the agent to join"
  return hs
end
if available.status == "True" then
  hs.status = "Healthy"
  hs.message = available.message
  return hs
end
-- Before the first renewal the agent is still joining; afterwards it is unreachable.
hs.status = "Degraded"
if available.reason == "LeaseNotFound" then
  hs.status = "Progressing"
end
hs.message = available.message
return hs
