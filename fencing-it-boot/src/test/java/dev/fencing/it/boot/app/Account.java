package dev.fencing.it.boot.app;

import org.springframework.data.annotation.Id;
import org.springframework.data.relational.core.mapping.Table;

/** A Spring Data JDBC aggregate (its {@code @Table} is Spring Data Relational's, so the JDBC repositories own it). */
@Table("proof_account")
public record Account(@Id Long id, long balance) {

    public Account plus(long amount) {
        return new Account(id, balance + amount);
    }
}
