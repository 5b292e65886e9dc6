package dev.fencing.benchmarks.request;

import org.springframework.transaction.annotation.Transactional;

/**
 * The transaction boundary: each method is one {@code @Transactional} call into {@link OrderRepository}, so the
 * fenced repository method (and its fence check) runs inside the service's transaction, on its connection.
 */
public class OrderService {

    private final OrderRepository repository;

    public OrderService(OrderRepository repository) {
        this.repository = repository;
    }

    /** Adds a line to order {@code id}, unfenced; returns the order's new total. */
    @Transactional
    public long addLine(long id, long amount) {
        return repository.addLine(id, amount);
    }

    /** Adds a line to order {@code id} through the fenced repository method; returns the order's new total. */
    @Transactional
    public long addLineFenced(long id, long amount) {
        return repository.addLineFenced(id, amount);
    }
}
