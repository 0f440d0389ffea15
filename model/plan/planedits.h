#pragma once
// The edits a user makes to a plan by hand (a model dropped on the mesh, a cluster swapped or
// resized, a role dropped on an axis, a degree or workload field changed) as pure functions
// from plan JSON to plan JSON. Every result loads (planFromJson) and places (placeRoles), so a
// document built from these edits can always be saved and opened again.

#include "base/expected.h"
#include "plan/placement.h"

#include <nlohmann/json.hpp>

#include <string>

namespace meshplan::model {

class ChipCatalog;
class ModelCatalog;

/// How a role dropped on an axis shares it.
enum class AxisDrop {
    Whole, ///< the role takes the whole axis; the roles that held it give up their share
    Split, ///< the role takes a factor of the axis next to the role that holds it
};

/// Builds edited plans against a chip and a model catalog (the built-in ones by default).
class PlanEdits
{
public:
    PlanEdits();
    PlanEdits(const ChipCatalog &chips, const ModelCatalog &models);

    /// Replaces "model" with `modelRef` (a catalog id, an inline object or {"hf_config": {...}}).
    /// A role whose degree no longer divides the new model (tensor: heads, and kv heads split evenly
    /// or copied a whole number of times; expert: experts; pipeline: at most the layers, as
    /// checkModelSharding asks) falls back to the largest divisor of it that does, and the freed
    /// factor goes to fsdp (training) or data (inference).
    Expected<nlohmann::json> withModel(const nlohmann::json &plan, const nlohmann::json &modelRef) const;

    /// Replaces "hardware" ({"chip": ..., "topology": ..., "slices": ...}). Degrees are refit to
    /// the new chip count: tensor, pipeline, expert, context, then the other batch role (data in
    /// training, fsdp in inference) kept while their product still divides it (else each reduced
    /// to its largest divisor that does), the rest to fsdp (training) or data (inference). The
    /// requested placement is cleared; auto placement takes over.
    Expected<nlohmann::json> withHardware(const nlohmann::json &plan, const nlohmann::json &hardware) const;

    /// Swaps the chip for catalog chip `chipId`, keeping the cluster's chip count where the new
    /// chip allows it: a TPU slice keeps its shape when the new chip takes it, else becomes the
    /// fewest slices of the most cube-like shape with the same chips; GPUs fill whole NVLink
    /// domains of the new chip (8 or 72; a node size the user chose is kept when it fits). A
    /// count no slice or domain can hold falls back to the chip's smallest usual unit (a 4x4 or
    /// 4x4x4 slice, one domain). Then as withHardware. Errors name "hardware.chip".
    Expected<nlohmann::json> withChip(const nlohmann::json &plan, const std::string &chipId) const;

    /// Sets `role`'s degree, keeping the product equal to the chip count: the factor is taken
    /// from fsdp, then data, then context, expert, pipeline, tensor, and a freed factor is given to
    /// fsdp (training) or data (inference), or to the other of the two when it is `role`. A
    /// requested placement that no longer fits is dropped for the roles involved. Errors name
    /// "parallelism.<role>".
    Expected<nlohmann::json> withDegree(const nlohmann::json &plan, Role role, int degree) const;

    /// Drops `role` on mesh axis `axis` ("x", "slice", "gpu", "node", ...). Whole: the role holds
    /// all of that axis (plus any other axes it held); each role that held part of the axis loses
    /// that part from its degree. Split: the role takes the axis's smallest factor >= 2 that
    /// leaves the current holders a whole share, from the holder with the largest share. The
    /// result states the placement of every role explicitly; a layout no placement can state (a
    /// role holding part of two axes, each shared with a role placed after it) is refused. On an
    /// axis the role already holds whole, nothing changes. Errors name "parallelism.placement".
    Expected<nlohmann::json> withRoleOnAxis(const nlohmann::json &plan, Role role, const std::string &axis,
                                            AxisDrop how) const;

    /// Sets one field by JSON pointer ("/workload/global_batch", "/parallelism/zero_stage", ...)
    /// and checks the result loads; a null `value` removes the key. Errors name the field.
    Expected<nlohmann::json> withField(const nlohmann::json &plan, const std::string &pointer,
                                       const nlohmann::json &value) const;

    /// Sets an inference plan's serving mode ("interleaved" or "disaggregated"). Disaggregated
    /// serving needs prefill chips: when the plan names none (or a count that no longer fits),
    /// half the replicas (rounded down, at least one) do prefill and the rest decode. A plan with
    /// a single replica is refused, naming parallelism.data. Errors name "workload.serving".
    Expected<nlohmann::json> withServing(const nlohmann::json &plan, const std::string &mode) const;

    /// Switches the workload between training and inference, keeping the other kind's fields
    /// the user set before (they stay in the file) and filling defaults for missing ones.
    Expected<nlohmann::json> withWorkloadKind(const nlohmann::json &plan, const std::string &kind) const;

    /// Checks that `plan` loads and places; the error names the field.
    std::optional<Error> check(const nlohmann::json &plan) const;

private:
    const ChipCatalog &m_chips;
    const ModelCatalog &m_models;
};

} // namespace meshplan::model
