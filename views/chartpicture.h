#pragma once
// A chart shown as a picture of itself, drawn larger as its place grows: on a projector the
// text of a chart must grow with the screen, which a QCustomPlot widget's fixed point sizes do not.

#include <QPixmap>
#include <QWidget>

#include <memory>

class QCustomPlot;

namespace meshplan::views {

class ChartPicture : public QWidget
{
public:
    explicit ChartPicture(QWidget *parent = nullptr);
    ~ChartPicture() override;

    /// Shows `plot` (fed already; kept hidden, drawn into the picture in this widget's palette).
    void setChart(std::unique_ptr<QCustomPlot> plot);
    /// Shows `message` in words instead of a chart (a slide whose plan has no such chart).
    void setMessage(const QString &message);
    QCustomPlot *chart() const { return m_plot.get(); }
    QString message() const { return m_message; }
    /// How much larger than its layout a chart is drawn in a place of `size` pixels: the chart is
    /// laid out at size / scale, so its text is `scale` times the text of a 560x300 chart (0.8 to 3).
    static double scaleFor(QSize size);

protected:
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void redraw();
    QPalette ownPalette() const;

    std::unique_ptr<QCustomPlot> m_plot;
    QPixmap m_picture;
    QString m_message;
};

} // namespace meshplan::views
