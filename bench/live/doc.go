// Package live benchmarks LiveQuery: the subscription index's matching
// cost per write against testing every subscription (pure, in-process),
// and fan-out over real WebSocket connections — 10,000 subscriptions on
// 1,000 connections held by a separate client process, a steady write
// rate through the service — measuring delivery latency and the server's
// CPU per delivered event. Results are in ../README.md ("LiveQuery").
package live
