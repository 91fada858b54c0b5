/** Customer names shared by the targets that seed customers: searches match the same shares of rows. */
export const FIRST = ['Ann', 'Ben', 'Chloe', 'Dev', 'Eli', 'Fay', 'Gus', 'Hana', 'Ivo', 'Jun', 'Kai', 'Lena', 'Milo', 'Nia', 'Omar', 'Pia', 'Quinn', 'Rosa', 'Sven', 'Tara'];
export const LAST = [
  'Lee', 'Ortiz', 'Nakamura', 'Smith', 'Okafor', 'Berg', 'Rossi', 'Dubois', 'Kowalski', 'Haddad',
  'Silva', 'Novak', 'Garcia', 'Jensen', 'Moreau', 'Tanaka', 'Fischer', 'Costa', 'Murphy', 'Ivanova',
  'Kim', 'Patel', 'Larsen', 'Romano', 'Weber', 'Santos', 'Horvat', 'Nilsson', 'Kaya', 'Byrne',
  'Mendes', 'Sato', 'Keller', 'Dunn', 'Varga', 'Lund', 'Ferrari', 'Aziz', 'Quinlan', 'Brennan',
  'Hoffmann', 'Wojcik', 'Castro', 'Ng', 'Olsen', 'Ricci', 'Bauer', 'Reyes', 'Walsh', 'Yilmaz',
];
export const DOMAINS = ['example.com', 'mail.test', 'studio.test', 'inbox.test'];
/** A surname given to one customer in 250,000: a search that matches a handful of rows. */
export const RARE_NAME = 'Quixley';
export const RARE_EVERY = 250_000;
export const RARE_AT = 777;
/** One surname in LAST: a search that matches 2 % of the customers. */
export const COMMON_TERM = 'smith';
