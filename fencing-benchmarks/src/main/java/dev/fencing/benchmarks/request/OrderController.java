package dev.fencing.benchmarks.request;

import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The two endpoints of the benchmark: {@code POST /unfenced/{id}} and {@code POST /fenced/{id}} add one line to
 * order {@code id} and answer with the order's new total as text. Only {@code /fenced/*} is covered by
 * {@code fencing.web.filter.url-patterns}, so only those requests have their {@code Fencing-Token} header bound.
 */
@RestController
public class OrderController {

    /** The amount every request adds; the response is then predictable (the old total plus this). */
    static final long AMOUNT = 1;

    private final OrderService service;

    public OrderController(OrderService service) {
        this.service = service;
    }

    @PostMapping("/unfenced/{id}")
    public String unfenced(@PathVariable long id) {
        return Long.toString(service.addLine(id, AMOUNT));
    }

    @PostMapping("/fenced/{id}")
    public String fenced(@PathVariable long id) {
        return Long.toString(service.addLineFenced(id, AMOUNT));
    }
}
