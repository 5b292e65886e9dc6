package dev.fencing.it.boot.app;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A JPA (Hibernate) entity; its table has {@code CHECK (quantity > 0)}, which fails at flush, after the fence. */
@Entity
@Table(name = "proof_order")
public class PurchaseOrder {

    @Id
    private Long id;

    private String item;

    private int quantity;

    protected PurchaseOrder() {
    }

    public PurchaseOrder(long id, String item, int quantity) {
        this.id = id;
        this.item = item;
        this.quantity = quantity;
    }

    public Long getId() {
        return id;
    }

    public String getItem() {
        return item;
    }

    public int getQuantity() {
        return quantity;
    }
}
