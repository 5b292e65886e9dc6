package dev.fencing.docs.web;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.token.FencingToken;
import dev.fencing.web.FencingExceptionAdvice;
import dev.fencing.web.FencingTransientFailureAdvice;
import dev.fencing.web.FencingTokenFilter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.web.client.RestClient;

class WebFencingConfigTest {

    @Test
    void theDocumentedBeansSendTheHeaderAndScopeTheFilter() throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        AtomicReference<String> header = new AtomicReference<>();
        server.createContext("/", exchange -> {
            header.set(exchange.getRequestHeaders().getFirst("Fencing-Token"));
            exchange.sendResponseHeaders(204, -1);
            exchange.close();
        });
        server.start();
        try (var context = new AnnotationConfigApplicationContext(WebFencingConfig.class)) {
            assertThat(context.getBean(FencingExceptionAdvice.class)).isNotNull();
            assertThat(context.getBean(FencingTransientFailureAdvice.class)).as("spring-tx is present").isNotNull();
            @SuppressWarnings("unchecked")
            FilterRegistrationBean<FencingTokenFilter> registration = context.getBean(FilterRegistrationBean.class);
            assertThat(registration.getUrlPatterns()).containsExactly("/internal/*");

            RestClient serviceB = context.getBean(RestClient.class).mutate()
                    .baseUrl("http://127.0.0.1:" + server.getAddress().getPort()).build();
            try (FencingScope scope = FencingContext.bind(new FencingToken("accounts:42", 34, "client-7"))) {
                serviceB.post().uri("/internal/deposit").retrieve().toBodilessEntity();
            }
            assertThat(header.get()).isEqualTo("accounts:42#34@client-7");
        } finally {
            server.stop(0);
        }
    }
}
