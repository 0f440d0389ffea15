// The one rule that reads a value's unit from its name, shared by the CLI's --explain, the report
// and the formula typesetter.
#include "base/units.h"
#include "base/valueunit.h"

#include <QTest>

using namespace meshplan::model;

Q_DECLARE_METATYPE(meshplan::model::ValueUnit)

class TestValueUnit : public QObject
{
    Q_OBJECT

private slots:
    void unitForName_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<ValueUnit>("unit");
        QTest::newRow("seconds") << "time_s" << ValueUnit::Seconds;
        QTest::newRow("a t_ name is a time") << "t_min" << ValueUnit::Seconds;
        QTest::newRow("bare t") << "t" << ValueUnit::Seconds;
        QTest::newRow("a path to seconds") << "collectives[3].time_s" << ValueUnit::Seconds;
        QTest::newRow("a time named for bandwidth") << "bandwidth_s" << ValueUnit::Seconds;
        QTest::newRow("tokens per second is a rate, not seconds") << "tokens_per_s" << ValueUnit::Plain;
        QTest::newRow("its path") << "inference.tokens_per_s" << ValueUnit::Plain;
        QTest::newRow("bytes per token") << "kv_cache_bytes_per_token" << ValueUnit::Bytes;
        QTest::newRow("bytes") << "hbm_bytes" << ValueUnit::Bytes;
        QTest::newRow("memory per chip whatever its key") << "memory_per_chip.params" << ValueUnit::Bytes;
        QTest::newRow("memory total") << "memory_per_chip.total" << ValueUnit::Bytes;
        QTest::newRow("bandwidth") << "hbm_bandwidth" << ValueUnit::BytesPerSecond;
        QTest::newRow("bytes per second") << "link_bytes_per_s" << ValueUnit::BytesPerSecond;
        QTest::newRow("an HBM rate streams bytes") << "hbm_rate" << ValueUnit::BytesPerSecond;
        QTest::newRow("decode HBM rate") << "decode_hbm" << ValueUnit::BytesPerSecond;
        QTest::newRow("peak FLOP/s") << "peak_flops" << ValueUnit::FlopsPerSecond;
        QTest::newRow("a kernel's rate") << "attention_rate" << ValueUnit::FlopsPerSecond;
        QTest::newRow("FLOPs per second") << "flops_per_s" << ValueUnit::FlopsPerSecond;
        QTest::newRow("FLOPs") << "flops" << ValueUnit::Flops;
        QTest::newRow("FLOPs per token") << "model.flops_per_token" << ValueUnit::Flops;
        QTest::newRow("a count of parameters") << "params" << ValueUnit::Plain;
        QTest::newRow("model parameters") << "model.params" << ValueUnit::Plain;
        QTest::newRow("a factor that names FLOPs") << "flops_fraction" << ValueUnit::Plain;
        QTest::newRow("a factor that names bytes") << "hbm_bytes_efficiency" << ValueUnit::Plain;
        QTest::newRow("a factor word inside another word") << "terms.operation_4_time_s" << ValueUnit::Seconds;
        QTest::newRow("mfu") << "mfu" << ValueUnit::Plain;
    }

    void unitForName()
    {
        QFETCH(QString, name);
        QFETCH(ValueUnit, unit);
        QCOMPARE(meshplan::model::unitForName(name.toStdString()), unit);
    }

    void formatInUnitUsesTheUnitsPrefixes()
    {
        QCOMPARE(formatInUnit(ValueUnit::Seconds, 1.54e-3), std::string("1.54 ms"));
        QCOMPARE(formatInUnit(ValueUnit::Bytes, 17.7e9), std::string("17.7 GB"));
        QCOMPARE(formatInUnit(ValueUnit::Bytes, 2.0 * 1024 * 1024 * 1024, true), std::string("2.00 GiB"));
        QCOMPARE(formatInUnit(ValueUnit::Flops, 1.2e18), std::string("1.20 EFLOP"));
        QCOMPARE(formatInUnit(ValueUnit::FlopsPerSecond, 4.59e14), std::string("459 TFLOP/s"));
        QCOMPARE(formatInUnit(ValueUnit::BytesPerSecond, 2.765e12), std::string("2.77 TB/s"));
        QCOMPARE(formatInUnit(ValueUnit::Plain, 0.1234), formatNumber(0.1234));
    }
};

QTEST_APPLESS_MAIN(TestValueUnit)
#include "tst_valueunit.moc"
