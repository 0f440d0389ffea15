// The window opens offscreen and shows every chip of the catalog.
#include "chipcatalog.h"
#include "chiptable.h"
#include "mainwindow.h"

#include <QTest>

class TestMainWindow : public QObject
{
    Q_OBJECT

private slots:
    void showsTheCatalog()
    {
        meshplan::app::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        const auto *table = window.findChild<meshplan::views::ChipTable *>();
        QVERIFY(table);
        QCOMPARE(table->rowCount(), static_cast<int>(meshplan::model::ChipCatalog::builtin().chips().size()));
        QCOMPARE(table->item(2, 0)->text(), QStringLiteral("tpu-v5e"));
        QCOMPARE(table->item(2, 2)->text(), QStringLiteral("197 TFLOP/s"));
        const QImage shot = window.grab().toImage();
        QVERIFY(!shot.isNull() && shot.width() > 100);
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
