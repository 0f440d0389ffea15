#pragma once
// How unevenly a MoE layer's routed tokens land on its expert-parallel ranks: the busiest rank
// sets the layer's time, so its load over the mean stretches the experts' work and traffic.

namespace meshplan::model {

/// The expected largest of `draws` independent standard normal values (0 for one draw):
/// Blom's plotting position, Phi^-1((n - 0.375) / (n + 0.25)): 2.07 for 32 draws, within 0.015 of
/// the exact value from 8 to 1024 draws and 0.03 above it for two.
double expectedMaxStandardNormal(int draws);

/// The busiest of `ranks` expert-parallel ranks' routed (token, expert) pairs over the mean, when
/// each rank receives `routedPerRank` pairs on average and the experts are placed by their
/// measured load, with redundant copies of the hottest (EPLB, as large expert-parallel serving
/// deploys them). 1 for a single rank. See expertload.cpp for the terms and their source.
double busiestExpertRankLoad(int ranks, double routedPerRank);

/// The relative spread of a rank's load that EPLB's placement leaves beyond sampling (its source
/// is in expertload.cpp), for the derivations.
double placedExpertLoadSpread();

} // namespace meshplan::model
