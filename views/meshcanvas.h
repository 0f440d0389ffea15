#pragma once
// The mesh canvas: the cluster's chips in their physical arrangement (torus layers, NVLink
// domains), its axes labelled with the roles placed on them, and the drop target for models,
// clusters and roles.

#include "cost/evaluation.h"
#include "plan/meshgroups.h"
#include "plan/plan.h"

#include <nlohmann/json.hpp>

#include <QGraphicsView>

class QGraphicsRectItem;
class QGraphicsSimpleTextItem;

#include <memory>
#include <optional>
#include <vector>

namespace meshplan::views {

class ChipBlockItem;
class AxisBarItem;
class GroupBoxItem;

class MeshCanvas : public QGraphicsView
{
    Q_OBJECT

public:
    /// Where a drop lands: an axis (its middle places the role on the whole axis, its ends split it).
    struct DropTarget {
        int axis = -1;
        bool split = false;
    };

    explicit MeshCanvas(QWidget *parent = nullptr);
    ~MeshCanvas() override;

    /// Shows `plan`'s mesh and role placement; `evaluation` (may be null) says what chips hold.
    /// The scene is rebuilt only when the mesh itself changes; otherwise labels and colours update.
    void setPlan(const model::Plan &plan, const model::Evaluation *evaluation);
    /// The title above the mesh. The window passes the charts' export title after every change,
    /// so an exported mesh and chart say the same.
    void setTitle(const QString &title);
    /// The header's title as shown (before eliding to the width).
    QString titleText() const { return m_titleText; }

    DropTarget dropTargetAt(const QPoint &viewportPos) const;
    /// Height in viewport pixels of the header (title, axis bars, legend) pinned above the mesh.
    int headerHeight() const { return m_headerHeight; }
    /// The chip drawn at `viewportPos`, or -1 (also -1 over an aggregated block).
    std::int64_t chipAt(const QPoint &viewportPos) const;
    /// What a click at `viewportPos` marks: the chip there, or on a box of nodes drawn as one
    /// tile the box's first chip (so the box and its groups light up); -1 elsewhere.
    std::int64_t markableChipAt(const QPoint &viewportPos) const;
    /// Grows the header and caption text by `scale` (1 to 4) for a room: a presenter passes its
    /// height over 640, so labels read from the back on a 4K projector.
    void setTextScale(double scale);
    double textScale() const;
    /// Scene rectangle of a chip's cell (empty if it is not drawn on its own).
    QRectF chipRect(std::int64_t chip) const;
    /// Scene rectangle an axis bar covers at the current zoom (the bars are laid out in pixels).
    QRectF axisBarRect(int axis) const;
    /// Highlights `chip`'s groups (tensor group, pipeline stage, FSDP group, ...); -1 clears.
    void setHoveredChip(std::int64_t chip);
    std::int64_t hoveredChip() const { return m_hovered; }
    /// Whether `chip` is drawn highlighted for `role` (it shares the hovered chip's group).
    bool isHighlighted(std::int64_t chip, model::Role role) const;
    /// What the hovered chip holds and which groups it belongs to, in words (several lines:
    /// the hover tooltip).
    QString describeChip(std::int64_t chip) const;
    /// One short line naming the chip and where it sits, for the status bar.
    QString chipSummary(std::int64_t chip) const;
    /// Axis labels as drawn: "x 16: tensor 4 · context 2 · fsdp 2".
    QStringList axisLabels() const;
    int blockCount() const { return static_cast<int>(m_blocks.size()); }
    /// Boxes of nodes a large GPU cluster is drawn as (0 when its nodes are drawn on their own),
    /// their scene rectangles and their names ("stage 3 · 128 nodes · 1024 GPUs").
    int boxCount() const { return static_cast<int>(m_boxes.size()); }
    QRectF boxRect(int box) const;
    QStringList boxNames() const { return m_boxNames; }
    /// Chips per drawn block when blocks stand for several nodes or layers (1 when not aggregated).
    std::int64_t blocksPerItem() const { return m_aggregate; }
    /// Fits the whole mesh in the view below the header, and follows later resizes again.
    void fitMesh();

    // Read by the items while painting.
    struct Paint;
    const Paint &paintState() const { return *m_paint; }

signals:
    void modelDropped(const nlohmann::json &modelRef);
    void hardwareDropped(const nlohmann::json &hardware);
    void roleDropped(model::Role role, const QString &axis, bool split);
    void fileDropped(const QString &path);
    /// The pointer moved onto a chip (-1: off the mesh); `summary` is chipSummary(), the full
    /// describeChip() shows in a tooltip by the pointer.
    void chipHovered(std::int64_t chip, const QString &summary);

protected:
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dragMoveEvent(QDragMoveEvent *event) override;
    void dragLeaveEvent(QDragLeaveEvent *event) override;
    void dropEvent(QDropEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void leaveEvent(QEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void changeEvent(QEvent *event) override;
    void scrollContentsBy(int dx, int dy) override;

private:
    int scaledPx(int px) const;
    /// Scroll bars only when the user has zoomed in; a fitted mesh shows none.
    void setScrollBarsShown(bool asNeeded);
    /// "Chip 5 (x=5 y=0 z=0)": the first line of describeChip and of chipSummary.
    QString chipHeading(std::int64_t chip) const;
    /// Text tied to a place on the mesh: drawn at a fixed pixel size, shrunk only to fit `slot`
    /// (scene units) and hidden when even that would be too small to read.
    struct Caption {
        QGraphicsSimpleTextItem *item = nullptr;
        QRectF slot;
        Qt::Alignment align;
    };

    void rebuildScene();
    void updateAxisBars();
    void setDropHover(DropTarget target);
    /// `px` and `bold`: the text's size and weight at full size (a slice's name is larger).
    QGraphicsSimpleTextItem *addCaption(const QString &text, const QRectF &slot, Qt::Alignment align, int px = 11,
                                        bool bold = false);
    /// After any zoom, pan or resize: the header back at the top, captions sized for the zoom.
    void viewChanged();
    void layoutHeader();
    void fitCaptions();

    std::unique_ptr<Paint> m_paint;
    std::vector<ChipBlockItem *> m_blocks;
    std::vector<GroupBoxItem *> m_boxes;
    QStringList m_boxNames;
    std::vector<AxisBarItem *> m_axisBars;
    std::vector<Caption> m_captions;
    QGraphicsRectItem *m_headerBack = nullptr;
    QGraphicsSimpleTextItem *m_title = nullptr;
    QGraphicsSimpleTextItem *m_legend = nullptr;
    QString m_titleText;
    QStringList m_legendLines;
    QRectF m_meshRect; // scene units: chips, frames and their captions, without the header
    int m_headerHeight = 0;
    std::string m_meshKey;
    std::int64_t m_hovered = -1;
    std::int64_t m_aggregate = 1;
    bool m_userZoomed = false;
};

} // namespace meshplan::views
