// Package dashboard serves `musterctl dashboard`: a small web page, on localhost, of the
// fleet as the hub sees it — member clusters with their health, nodes and taints, FleetJobs
// and BroadcastJobs with their progress in every cluster, and FleetCronJobs with their last
// and next runs.
//
// The server reads the hub through an informer cache, so a browser's request never reaches
// the API server; every change the informers see is pushed to open pages as a server-sent
// event carrying the page's re-rendered body. The page itself is html/template and a few
// lines of embedded JavaScript, with nothing fetched from elsewhere.
package dashboard
