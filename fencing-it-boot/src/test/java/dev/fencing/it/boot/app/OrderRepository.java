package dev.fencing.it.boot.app;

import dev.fencing.annotation.Fenced;
import org.springframework.data.jpa.repository.JpaRepository;

/** Spring Data JPA: the fenced {@code save} is the only write the application makes. */
public interface OrderRepository extends JpaRepository<PurchaseOrder, Long> {

    @Override
    @Fenced(resource = "orders")
    <S extends PurchaseOrder> S save(S order);
}
