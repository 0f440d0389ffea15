// Which chips share a role's group, worked by hand for the book's ch. 6 layout and a GPU cluster.
#include "hardware/chipcatalog.h"
#include "plan/meshgroups.h"

#include <QTest>

using namespace meshplan::model;

class TestMeshGroups : public QObject
{
    Q_OBJECT

private slots:
    void tpuCoordinatesRoundTrip()
    {
        const auto t = Topology::tpuSlice(*ChipCatalog::builtin().find("tpu-v5p"), {16, 16, 32}, 1).value();
        const auto p = placeRoles(t, {1, 1024, 4, 1, 1, 2}, {}).value();
        const MeshGroups g(t, p);
        QCOMPARE(g.chipCount(), 8192);
        QCOMPARE(g.coordinates(5 + 16 * 3 + 256 * 7), (std::vector<int>{5, 3, 7}));
        for (std::int64_t chip : {0, 1, 255, 256, 4097, 8191})
            QCOMPARE(g.chipAt(g.coordinates(chip)), chip);
    }

    // A plan may place some roles and leave the rest: fsdp on x and y of a 4x4x4 v5p slice with
    // tensor 4 unplaced. In the default order tensor takes x first and fsdp no longer fits; the
    // placed role goes first and tensor takes z, the axis left.
    void placedRolesGoFirstWhenTheOrderCollides()
    {
        const auto t = Topology::tpuSlice(*ChipCatalog::builtin().find("tpu-v5p"), {4, 4, 4}, 1).value();
        const auto p = placeRoles(t, {1, 16, 4, 1, 1, 1}, {{Role::Fsdp, {"x", "y"}}});
        QVERIFY2(p.hasValue(), p.hasValue() ? "" : p.error().toString().c_str());
        const auto names = p->axisNames(t);
        QCOMPARE(names.at("fsdp"), (std::vector<std::string>{"x", "y"}));
        QCOMPARE(names.at("tensor"), (std::vector<std::string>{"z"}));
        // Unplaced, tensor keeps its innermost place on x as before.
        const auto free = placeRoles(t, {1, 16, 4, 1, 1, 1}, {}).value();
        QCOMPARE(free.axisNames(t).at("tensor"), (std::vector<std::string>{"x"}));
        // A placement that cannot fit in any order is still refused.
        QVERIFY(!placeRoles(t, {1, 16, 4, 1, 1, 1}, {{Role::Fsdp, {"x"}}}).hasValue());
    }

    void tensorContextFsdpOnX()
    {
        // Degrees: data 1, fsdp 1024, tensor 4, pipeline 1, expert 1, context 2 (the default plan):
        // x holds tensor 4 (stride 1), context 2 (stride 4), fsdp 2 (stride 8); y and z fsdp.
        const auto t = Topology::tpuSlice(*ChipCatalog::builtin().find("tpu-v5p"), {16, 16, 32}, 1).value();
        const auto p = placeRoles(t, {1, 1024, 4, 1, 1, 2}, {}).value();
        const MeshGroups g(t, p);
        QCOMPARE(g.members(5, Role::Tensor), (std::vector<std::int64_t>{4, 5, 6, 7}));
        QCOMPARE(g.members(5, Role::Context), (std::vector<std::int64_t>{1, 5}));
        QCOMPARE(g.rankIn(5, Role::Tensor), 1);
        QCOMPARE(g.rankIn(5, Role::Context), 1);
        QCOMPARE(g.rankIn(13, Role::Fsdp), 1);
        const auto fsdp = g.members(5, Role::Fsdp);
        QCOMPARE(fsdp.size(), std::size_t(1024));
        QCOMPARE(fsdp[0], 5);
        QCOMPARE(fsdp[1], 13);
        QCOMPARE(fsdp[2], 5 + 16);
        QCOMPARE(fsdp.back(), 13 + 16 * 15 + 256 * 31);
        QCOMPARE(g.groupOf(13, Role::Fsdp), g.groupOf(5 + 256 * 9, Role::Fsdp));
        QVERIFY(g.groupOf(6, Role::Fsdp) != g.groupOf(5, Role::Fsdp));
        // Roles of degree 1: every chip its own group.
        QCOMPARE(g.members(77, Role::Data), (std::vector<std::int64_t>{77}));
        QCOMPARE(g.rankIn(77, Role::Pipeline), 0);

        const auto x = g.sharesOf(0);
        QCOMPARE(x.size(), std::size_t(3));
        QCOMPARE(x[0].role, Role::Tensor);
        QCOMPARE(x[1].role, Role::Context);
        QCOMPARE(x[1].stride, 4);
        QCOMPARE(x[2].role, Role::Fsdp);
        QCOMPARE(x[2].size, 2);
        QCOMPARE(g.sharesOf(2).size(), std::size_t(1));
    }

    void gpuPipelineStagesAcrossNodes()
    {
        // 4 nodes x 8 GPUs, tensor 8 in the node, pipeline 4 across nodes: a node is a stage.
        const auto t = Topology::gpuCluster(*ChipCatalog::builtin().find("h100-sxm"), 4, 8).value();
        const auto p = placeRoles(t, {1, 1, 8, 4, 1, 1}, {}).value();
        const MeshGroups g(t, p);
        QCOMPARE(g.members(10, Role::Tensor), (std::vector<std::int64_t>{8, 9, 10, 11, 12, 13, 14, 15}));
        QCOMPARE(g.rankIn(10, Role::Pipeline), 1);
        QCOMPARE(g.members(10, Role::Pipeline), (std::vector<std::int64_t>{2, 10, 18, 26}));
    }
};

QTEST_MAIN(TestMeshGroups)
#include "tst_meshgroups.moc"
