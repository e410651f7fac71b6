// Cloud code of the dashboard test's app: one job, so the Jobs pages have
// something to list and run.
Parse.Cloud.job('countTeams', async (request) => {
  const count = await new Parse.Query('Team').count({ useMasterKey: true });
  request.message(`counted ${count} teams`);
});
