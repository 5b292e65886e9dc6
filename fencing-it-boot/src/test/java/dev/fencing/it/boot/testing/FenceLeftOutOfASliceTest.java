package dev.fencing.it.boot.testing;

import dev.fencing.FencingConfigurationException;
import dev.fencing.boot.autoconfigure.AutoConfigureFencing;
import dev.fencing.token.FencingToken;
import dev.fencing.web.FencingHeader;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.TestContextManager;
import org.springframework.test.context.bean.override.mockito.MockitoBean;
import org.springframework.test.web.servlet.MockMvc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.Mockito.verify;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;

/**
 * A web slice with a real fenced bean in it: without the fence it does not start, and the failure names
 * {@code @AutoConfigureFencing}; with it, the bean is checked in the slice as in the application.
 */
class FenceLeftOutOfASliceTest {

    /** The controller and the real fenced service; only the repository is mocked. */
    @WebMvcTest(controllers = WalletController.class)
    @Import(WalletService.class)
    static class WithoutTheFence {
        @MockitoBean
        WalletRepository repository;
    }

    @WebMvcTest(controllers = WalletController.class, properties = {"fencing.store.type=in-memory",
            "fencing.web.filter.url-patterns=/internal/*"})
    @Import(WalletService.class)
    @AutoConfigureFencing
    static class WithTheFence {
        @Autowired
        MockMvc mvc;

        @MockitoBean
        WalletRepository repository;
    }

    @Test
    void aRealFencedBeanInASliceWithoutTheFenceFailsItsStartNamingTheAnnotation() {
        TestContextManager tests = new TestContextManager(WithoutTheFence.class);
        assertThatThrownBy(() -> tests.prepareTestInstance(new WithoutTheFence()))
                .rootCause().isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("WalletService.deposit(..)")
                .hasMessageContaining("the fencing starter is on the class path")
                .hasMessageContaining("@AutoConfigureFencing")
                .hasMessageNotContaining("WalletRepository"); // the mock writes nothing
    }

    @Test
    void withAutoConfigureFencingTheRealBeanIsCheckedInTheSlice() throws Exception {
        WithTheFence test = new WithTheFence();
        new TestContextManager(WithTheFence.class).prepareTestInstance(test);
        assertThat(deposit(test.mvc, null)).isEqualTo(428);
        assertThat(deposit(test.mvc, new FencingToken("wallets:3", 5, "caller"))).isEqualTo(200);
        assertThat(deposit(test.mvc, new FencingToken("wallets:3", 4, "zombie"))).isEqualTo(409);
        verify(test.repository).deposit(3, 10); // once: only the token 5 call reached it
    }

    private static int deposit(MockMvc mvc, FencingToken token) throws Exception {
        var request = post("/internal/wallets/3/deposits/10");
        if (token != null) {
            request.header(FencingHeader.NAME, token.toText());
        }
        return mvc.perform(request).andReturn().getResponse().getStatus();
    }
}
