package dev.fencing.verify.checker;

import dev.fencing.verify.history.Op;
import dev.fencing.verify.history.OpType;

import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/** Finds the final read of a resource: its {@code read} that completed ok last (by monotonic time). */
final class FinalRead {

    private FinalRead() {
    }

    static Optional<Op> of(List<Operations.Operation> operations, String resource) {
        return operations.stream()
                .filter(o -> o.outcome() == OpType.OK && "read".equals(o.f())
                        && java.util.Objects.equals(resource, o.resource()))
                .map(Operations.Operation::completion)
                .max(Comparator.comparingLong(Op::mono));
    }
}
