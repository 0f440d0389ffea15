#include <QtTest>

class PlandocumentTest : public QObject
{
    Q_OBJECT
private slots:
    void placeholder() { QSKIP("not written yet"); }
};

QTEST_MAIN(PlandocumentTest)
#include "tst_plandocument.moc"
