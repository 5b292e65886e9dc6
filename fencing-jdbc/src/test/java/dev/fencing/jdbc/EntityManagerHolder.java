package dev.fencing.jdbc;

import org.springframework.transaction.support.ResourceHolderSupport;

/**
 * Stands in for Spring ORM's {@code org.springframework.orm.jpa.EntityManagerHolder} (not on this module's class
 * path), which the store recognises by its simple name: joined to the transaction (a JPA transaction, or an entity
 * manager used in this one), or only opened for the request (open-in-view), as Spring's is.
 */
final class EntityManagerHolder extends ResourceHolderSupport {

    EntityManagerHolder(boolean synchronizedWithTransaction) {
        setSynchronizedWithTransaction(synchronizedWithTransaction);
    }
}
