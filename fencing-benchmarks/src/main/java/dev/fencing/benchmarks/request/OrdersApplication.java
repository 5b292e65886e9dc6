package dev.fencing.benchmarks.request;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;

/**
 * The application {@link WholeRequestBenchmark} starts once per trial: Spring Boot with embedded Tomcat, HikariCP,
 * Boot's transaction manager and the fencing starter (a {@code JdbcFenceStore} on the application's
 * {@code DataSource}, the {@code Fencing-Token} filter on {@code /fenced/*}). It scans nothing: its three beans are
 * imported by name, so the rest of the benchmarks package never becomes part of it.
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
@Import({OrderController.class, OrderService.class, OrderRepository.class})
public class OrdersApplication {
}
