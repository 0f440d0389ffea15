#pragma once
// A chart with its toolbar: reset the view, copy the image, export to PNG, PDF or SVG, and any
// controls the chart needs.

#include <QWidget>

class QCustomPlot;
class QHBoxLayout;

namespace meshplan::views {

class ChartPanel : public QWidget
{
    Q_OBJECT

public:
    /// Takes `chart` as a child; `name` is the default export file name ("roofline").
    ChartPanel(QCustomPlot *chart, const QString &name, QWidget *parent = nullptr);

    QCustomPlot *chart() const { return m_chart; }
    /// Adds a control (a mode switch) to the toolbar, left of the export button.
    void addControl(QWidget *control);
    /// Asks for a file and exports the chart at the chart's size (PNG at 2x for slides).
    void exportDialog();
    /// Puts the chart on the clipboard as an image at twice its size, ready to paste in a slide.
    void copyToClipboard();
    /// The line exported files carry above the chart ("LLaMA-3 70B · 8192 x TPU v5p").
    void setExportTitle(const QString &title) { m_title = title; }
    QString exportTitle() const { return m_title; }

signals:
    /// The user asked for the chart's own ranges back after zooming or dragging (the Reset
    /// button, or a double click on the chart); whoever feeds the chart redraws it.
    void resetRequested();

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    QCustomPlot *m_chart;
    QString m_name;
    QString m_title;
    QHBoxLayout *m_bar;
};

} // namespace meshplan::views
