// The book's sharding notation and the four cases of sharded matmul (ch. 3).
#include "cost/shardedmatmul.h"
#include "hardware/chipcatalog.h"
#include "plan/shardingnotation.h"

#include <QTest>

using namespace meshplan::model;

namespace {

Topology v5e4x4()
{
    return Topology::tpuSlice(*ChipCatalog::builtin().find("tpu-v5e"), {4, 4}, 1).value();
}

MatmulAnalysis analyze(const char *text, const std::map<std::string, std::int64_t> &dims)
{
    return analyzeMatmul(v5e4x4(), parseMatmul(text).value(), dims, DType::Bf16).value();
}

const std::map<std::string, std::int64_t> kDims{{"I", 4096}, {"J", 8192}, {"K", 8192}};

} // namespace

class TestShardingNotation : public QObject
{
    Q_OBJECT

private slots:
    void parsesAndPrints_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("printed");
        QTest::newRow("plain") << "A[I_X, J_Y] . B[J_Y, K] -> C[I_X, K]" << "A[I_X, J_Y] . B[J_Y, K] -> C[I_X, K]";
        QTest::newRow("two axes on a dim") << "A[I_XY, J]*B[J,K]->C[I_XY,K]" << "A[I_XY, J] . B[J, K] -> C[I_XY, K]";
        QTest::newRow("book's dot and arrow") << "In[B_X, D] \xC2\xB7_D W[D, F_Y] \xE2\x86\x92 Out[B_X, F_Y]"
                                              << "In[B_X, D] . W[D, F_Y] -> Out[B_X, F_Y]";
        QTest::newRow("unreduced result") << "A[I, J_X] . B[J_X, K] -> C[I, K]{U_X}" << "A[I, J_X] . B[J_X, K] -> C[I, K]{U_X}";
        QTest::newRow("gpu axes in braces") << "A[I_{gpu,node}, J] @ B[J, K] -> C[I_{gpu,node}, K]"
                                            << "A[I_GN, J] . B[J, K] -> C[I_GN, K]";
    }
    void parsesAndPrints()
    {
        QFETCH(QString, text);
        QFETCH(QString, printed);
        const auto e = parseMatmul(text.toStdString());
        QVERIFY2(e.hasValue(), e ? "" : e.error().message.c_str());
        QCOMPARE(QString::fromStdString(e->toString()), printed);
    }

    void rejectsBadNotation_data()
    {
        QTest::addColumn<QString>("text");
        QTest::newRow("axis used twice in one array") << "A[I_X, J_X] . B[J, K] -> C[I, K]";
        QTest::newRow("unknown axis letter") << "A[I_Q, J] . B[J, K] -> C[I, K]";
        QTest::newRow("no arrow") << "A[I, J] . B[J, K] C[I, K]";
        QTest::newRow("unclosed bracket") << "A[I, J . B[J, K] -> C[I, K]";
        QTest::newRow("trailing text") << "A[I, J] . B[J, K] -> C[I, K] extra";
        QTest::newRow("empty") << "";
        QTest::newRow("repeated dim") << "A[I, I] . B[I, K] -> C[I, K]";
    }
    void rejectsBadNotation()
    {
        QFETCH(QString, text);
        const auto e = parseMatmul(text.toStdString());
        QVERIFY(!e.hasValue());
        QCOMPARE(QString::fromStdString(e.error().path), QStringLiteral("notation"));
    }

    void caseOneNeedsNothing()
    {
        const auto a = analyze("A[I_X, J] . B[J, K_Y] -> C[I_X, K_Y]", kDims);
        QCOMPARE(a.bookCase, 1);
        QVERIFY(a.collectives.empty());
        QCOMPARE(a.flopsPerChip, 2.0 * 1024 * 8192 * 2048);
        QCOMPARE(a.bound, std::string("compute"));
    }

    void caseTwoGathersTheShardedInput()
    {
        const auto a = analyze("A[I, J_X] . B[J, K] -> C[I, K]", kDims);
        QCOMPARE(a.bookCase, 2);
        QCOMPARE(a.collectives.size(), std::size_t(1));
        QCOMPARE(a.collectives[0].op, CollectiveOp::AllGather);
        QCOMPARE(a.collectives[0].array, std::string("A"));
        QVERIFY(a.collectives[0].beforeMatmul);
        QCOMPARE(a.collectives[0].bytes, 2.0 * 4096 * 8192); // the gathered A
        // x is a 4-long line on a v5e 4x4: (3/4) V / 4.5e10.
        QVERIFY(std::fabs(a.collectives[0].cost.time - 0.75 * 2.0 * 4096 * 8192 / 4.5e10) < 1e-12);
    }

    void caseThreeReducesOrScatters()
    {
        const auto reduce = analyze("A[I, J_X] . B[J_X, K] -> C[I, K]", kDims);
        QCOMPARE(reduce.bookCase, 3);
        QCOMPARE(reduce.collectives.size(), std::size_t(1));
        QCOMPARE(reduce.collectives[0].op, CollectiveOp::AllReduce);
        QCOMPARE(reduce.collectives[0].bytes, 2.0 * 4096 * 8192);
        const auto scatter = analyze("A[I, J_X] . B[J_X, K] -> C[I, K_X]", kDims);
        QCOMPARE(scatter.collectives.size(), std::size_t(1));
        QCOMPARE(scatter.collectives[0].op, CollectiveOp::ReduceScatter);
        QVERIFY(scatter.commsTime < reduce.commsTime / 1.9); // RS is half an AR
        const auto unreduced = analyze("A[I, J_X] . B[J_X, K] -> C[I, K]{U_X}", kDims);
        QVERIFY(unreduced.collectives.empty());
    }

    void caseFourGathersOneInput()
    {
        // Both inputs shard a non-contracting dim over X: each chip would hold only diagonal blocks.
        const auto a = analyze("A[I_X, J] . B[J, K_X] -> C[I, K_X]", {{"I", 512}, {"J", 8192}, {"K", 8192}});
        QCOMPARE(a.bookCase, 4);
        QCOMPARE(a.collectives[0].op, CollectiveOp::AllGather);
        QCOMPARE(a.collectives[0].array, std::string("A")); // the smaller input is gathered
    }

    void resultLayoutChanges()
    {
        // An output axis dropped after the matmul is an AllGather; one moved between dims an AllToAll.
        const auto gather = analyze("A[I_X, J] . B[J, K] -> C[I, K]", kDims);
        QCOMPARE(gather.collectives.size(), std::size_t(1));
        QCOMPARE(gather.collectives[0].op, CollectiveOp::AllGather);
        QVERIFY(!gather.collectives[0].beforeMatmul);
        const auto move = analyze("A[I_X, J] . B[J, K] -> C[I, K_X]", kDims);
        QCOMPARE(move.collectives.size(), std::size_t(1));
        QCOMPARE(move.collectives[0].op, CollectiveOp::AllToAll);
    }

    void badDimsAndAxes_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("dims");
        QTest::addColumn<QString>("path");
        QTest::newRow("missing size") << "A[I, J] . B[J, K] -> C[I, K]" << "I=8,J=8" << "dims.K";
        QTest::newRow("uneven split") << "A[I_X, J] . B[J, K] -> C[I_X, K]" << "I=6,J=8,K=8" << "dims.I";
        QTest::newRow("axis not on the mesh") << "A[I_Z, J] . B[J, K] -> C[I_Z, K]" << "I=8,J=8,K=8" << "notation";
        QTest::newRow("nothing contracted") << "A[I, J] . B[K, L] -> C[I, J, K, L]" << "I=8,J=8,K=8,L=8" << "notation";
        QTest::newRow("dim summed away") << "A[I, J] . B[J, K] -> C[K]" << "I=8,J=8,K=8" << "notation";
        QTest::newRow("zero size") << "A[I, J] . B[J, K] -> C[I, K]" << "I=0,J=8,K=8" << "dims.I";
    }
    void badDimsAndAxes()
    {
        QFETCH(QString, text);
        QFETCH(QString, dims);
        QFETCH(QString, path);
        std::map<std::string, std::int64_t> sizes;
        for (const auto &part : dims.split(QLatin1Char(','))) {
            const auto kv = part.split(QLatin1Char('='));
            sizes[kv[0].toStdString()] = kv[1].toLongLong();
        }
        const auto a = analyzeMatmul(v5e4x4(), parseMatmul(text.toStdString()).value(), sizes, DType::Bf16);
        QVERIFY(!a.hasValue());
        QCOMPARE(QString::fromStdString(a.error().path), path);
    }
};

QTEST_APPLESS_MAIN(TestShardingNotation)
#include "tst_shardingnotation.moc"
