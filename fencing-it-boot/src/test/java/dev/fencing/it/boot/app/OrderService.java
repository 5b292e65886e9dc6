package dev.fencing.it.boot.app;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * Places orders through the JPA repository in {@code @Transactional} methods that take the {@code orders} lock from
 * the JDBC issuer: with Boot's {@code JpaTransactionManager} the fence check must join the JPA transaction.
 */
@Service
public class OrderService {

    /**
     * Thrown after the fenced save returned: the token it carried and the max_seen that the JPA transaction's own
     * connection read right after the check (the fence's uncommitted update is visible there only if the check ran
     * on that connection).
     */
    public static final class FailedAfterFence extends RuntimeException {
        private static final long serialVersionUID = 1L;
        public final long token;
        public final long maxSeenInTransaction;

        FailedAfterFence(long token, long maxSeenInTransaction) {
            super("failing after the fenced save (token " + token + ", max_seen in the transaction "
                    + maxSeenInTransaction + ")");
            this.token = token;
            this.maxSeenInTransaction = maxSeenInTransaction;
        }
    }

    private final OrderRepository orders;
    private final String fenceTable;

    @PersistenceContext
    private EntityManager entityManager;

    public OrderService(OrderRepository orders, @Value("${fencing.store.jdbc.table}") String fenceTable) {
        this.orders = orders;
        this.fenceTable = fenceTable;
    }

    /** Saves the order; the commit flushes it (a CHECK violation then fails the commit, after the fence). */
    @Fenced(resource = "orders", acquire = true)
    @Transactional
    public long place(long id, String item, int quantity) {
        orders.save(new PurchaseOrder(id, item, quantity));
        return FencingContext.current("orders").value();
    }

    /** Saves the order, reads max_seen through the EntityManager, then fails: everything must roll back. */
    @Fenced(resource = "orders", acquire = true)
    @Transactional
    public void placeThenFail(long id, String item, int quantity) {
        orders.save(new PurchaseOrder(id, item, quantity));
        Number seen = (Number) entityManager
                .createNativeQuery("SELECT max_seen FROM " + fenceTable + " WHERE resource = 'orders'")
                .getSingleResult();
        throw new FailedAfterFence(FencingContext.current("orders").value(), seen.longValue());
    }
}
