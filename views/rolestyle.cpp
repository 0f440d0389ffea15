#include "rolestyle.h"

#include <QCoreApplication>

namespace meshplan::views {

QColor roleColor(model::Role role)
{
    // Okabe-Ito colours: distinguishable with the common colour-vision deficiencies.
    switch (role) {
    case model::Role::Data: return QColor(0x00, 0x72, 0xB2);
    case model::Role::Fsdp: return QColor(0x56, 0xB4, 0xE9);
    case model::Role::Tensor: return QColor(0xD5, 0x5E, 0x00);
    case model::Role::Pipeline: return QColor(0x00, 0x9E, 0x73);
    case model::Role::Expert: return QColor(0xCC, 0x79, 0xA7);
    case model::Role::Context: return QColor(0xE6, 0x9F, 0x00);
    }
    return Qt::gray;
}

QString roleLabel(model::Role role)
{
    switch (role) {
    case model::Role::Data: return QCoreApplication::translate("Role", "Data");
    case model::Role::Fsdp: return QCoreApplication::translate("Role", "FSDP");
    case model::Role::Tensor: return QCoreApplication::translate("Role", "Tensor");
    case model::Role::Pipeline: return QCoreApplication::translate("Role", "Pipeline");
    case model::Role::Expert: return QCoreApplication::translate("Role", "Expert");
    case model::Role::Context: return QCoreApplication::translate("Role", "Context");
    }
    return {};
}

QString roleDescription(model::Role role)
{
    switch (role) {
    case model::Role::Data:
        return QCoreApplication::translate("Role", "Data parallelism: each group holds a full replica and "
                                                   "all-reduces gradients once per step (ZeRO stages shard them; Megatron's "
                                                   "distributed optimizer reduce-scatters them and gathers the "
                                                   "updated weights).");
    case model::Role::Fsdp:
        return QCoreApplication::translate("Role", "FSDP (ZeRO-3): weights, gradients and optimizer state sharded; "
                                                   "weights all-gathered before use, gradients reduce-scattered.");
    case model::Role::Tensor:
        return QCoreApplication::translate("Role", "Tensor (model) parallelism: each matmul split across the group, "
                                                   "activations all-reduced (or gathered) every layer.");
    case model::Role::Pipeline:
        return QCoreApplication::translate("Role", "Pipeline parallelism: layers split into stages; activations "
                                                   "sent between stages, a bubble at the start and end of a step.");
    case model::Role::Expert:
        return QCoreApplication::translate("Role", "Expert parallelism: MoE experts split across the group; tokens "
                                                   "routed with two all-to-alls per MoE layer.");
    case model::Role::Context:
        return QCoreApplication::translate("Role", "Context (sequence) parallelism: the sequence split across the "
                                                   "group; keys and values passed around a ring in attention. "
                                                   "The group holds the same weights, so ZeRO shards them over it "
                                                   "as over data.");
    }
    return {};
}

} // namespace meshplan::views
