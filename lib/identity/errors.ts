// What a failed sign-in's Auth.js error type means to the person who met it. Pure.
const texts: Record<string, string> = {
  AccessDenied: 'Access was refused.',
  OAuthCallbackError: 'The identity provider reported an error, or the sign-in was cancelled.',
  OAuthSignInError: 'The sign-in could not be started with the identity provider. Try again in a moment.',
  CredentialsSignin: 'Wrong email or password, or the account is disabled.',
};
const unverified =
  'The identity provider’s answer could not be verified: it may have expired, been used already, or been tampered with. Start again from the sign-in page.';

export function signInErrorText(type: string | undefined): string {
  return (type && texts[type]) || unverified;
}
