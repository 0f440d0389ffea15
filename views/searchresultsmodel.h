#pragma once
// The ranked results of a search as a table: rank, step time (serving: latency), MFU (serving:
// tokens/s per chip), memory per chip, cost, degrees, placement, settings and why each wins.

#include "explore/plansearch.h"

#include <QAbstractTableModel>

#include <vector>

namespace meshplan::views {

class SearchResultsModel : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Column { Rank, Time, Rate, Memory, Cost, Degrees, Placement, Settings, Why, ColumnCount };
    /// The role that sorts: numbers for numeric columns (rank, seconds, bytes), text for the others.
    static constexpr int SortRole = Qt::UserRole;

    explicit SearchResultsModel(QObject *parent = nullptr);

    /// Shows `results` (best first); `training` picks the column meanings.
    void setResults(const std::vector<model::SearchCandidate> &results, bool training);
    void clear();
    const model::SearchCandidate &candidate(int row) const { return m_results[static_cast<std::size_t>(row)]; }
    bool training() const { return m_training; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // The words the table, the plot's tooltips and the window's messages share.
    /// The roles above degree 1: "fsdp 256 × tensor 8 × pipeline 8" (all 1: "one chip").
    static QString degreesText(const model::Plan &plan);
    /// Where the roles sit: "tensor x · fsdp y,z" (the evaluation's placement).
    static QString placementText(const model::Evaluation &evaluation);
    /// Training: ZeRO stage, microbatches, schedule and virtual stages, remat; serving: batch,
    /// mode and prefill chips.
    static QString settingsText(const model::Plan &plan);
    /// The step time (serving: the per-token latency, a decode step) in seconds.
    static double timeOf(const model::Evaluation &evaluation, bool training);
    /// Training: the whole run's cost (workload.train_tokens at the plan's price); serving: the
    /// cost of a million tokens. 0 without a price (or a token budget).
    static double costOf(const model::Evaluation &evaluation, bool training);
    /// Rich text naming everything about one candidate (the plot's hover, the rows' tooltips).
    static QString describe(const model::SearchCandidate &candidate, bool training, int rank);

private:
    QVariant display(const model::SearchCandidate &c, int column, int row) const;
    QVariant sortKey(const model::SearchCandidate &c, int column, int row) const;

    std::vector<model::SearchCandidate> m_results;
    bool m_training = true;
};

} // namespace meshplan::views
